import AuthServer
import FoundationEssentials
import IssuerComposition
import MailSending

// The outbox's sender: mail (SMTP, or the drop directory without
// GATEHOUSE_SMTP_URL) and back-channel logout notices (signed with the
// issuer's active key, POSTed through the outbound HTTPS client). One per
// node; Scripts/run's supervisor and gatehouse-mailer.service keep it running.
MailerProcess.run { config in
    let services = try IssuerComposition.services(config)
    let delivery = BackchannelLogoutDelivery(storage: services.storage, tokenIssuer: services.tokenIssuer,
                                             http: OutboundDocumentFetcher(config, environment: ProcessInfo.processInfo.environment))
    return (services.storage, [.backchannelLogout: BackchannelLogoutCourier(delivery)])
}
