#ifndef GATEHOUSE_CQRENCODE_SHIM_H
#define GATEHOUSE_CQRENCODE_SHIM_H
// libqrencode (Debian libqrencode-dev): QR codes for TOTP enrolment on
// /account, drawn as SVG by AuthServer's QRCodeSVG, which alone uses it.
#include <qrencode.h>
#endif
