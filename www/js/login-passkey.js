// /login.html: "Sign in with a passkey" (WebAuthn Level 3 §7.2). The button
// stays hidden without JavaScript or without WebAuthn; the password form
// works either way. A discoverable credential names its user, so no email
// is needed: the browser offers the passkeys it has for this site.
(function () {
  "use strict";

  var button = document.getElementById("passkey-sign-in");
  var form = document.querySelector("form.login");
  if (!button || !form || !GatehouseWebAuthn.supported()) {
    return;
  }
  var req = form.elements.namedItem("req").value;
  var error = document.getElementById("passkey-error");
  button.hidden = false;

  GatehouseWebAuthn.onPress(button, error, function () {
    return GatehouseWebAuthn.post("/login/passkey/options", { req: req })
      .then(function (options) {
        return navigator.credentials.get(GatehouseWebAuthn.requestOptions(options));
      })
      .then(function (credential) {
        return GatehouseWebAuthn.post("/login/passkey", GatehouseWebAuthn.assertionFields({ req: req }, credential));
      })
      .then(function (answer) {
        // The app's redirect URI with the code (fetch cannot follow it).
        window.location.assign(answer.location);
      });
  });
})();
