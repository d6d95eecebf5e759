// /account: "Add a passkey" (WebAuthn Level 3 §7.1). The page works without
// this script except for adding a passkey, which needs the browser's API.
(function () {
  "use strict";

  var card = document.querySelector("main[data-csrf]");
  var button = document.getElementById("add-passkey");
  if (!card || !button || !GatehouseWebAuthn.supported()) {
    return;
  }
  var csrf = card.getAttribute("data-csrf");
  var nameField = document.getElementById("passkey-name");
  var error = document.getElementById("passkey-error");
  button.hidden = false;
  document.querySelector(".passkey-add").hidden = false;

  GatehouseWebAuthn.onPress(button, error, function () {
    return GatehouseWebAuthn.post("/account/passkeys/options", { csrf: csrf })
      .then(function (options) {
        return navigator.credentials.create(GatehouseWebAuthn.creationOptions(options));
      })
      .then(function (credential) {
        var response = credential.response;
        var transports = typeof response.getTransports === "function" ? response.getTransports().join(",") : "";
        return GatehouseWebAuthn.post("/account/passkeys", {
          csrf: csrf,
          name: nameField ? nameField.value : "",
          clientDataJSON: GatehouseWebAuthn.toBase64url(response.clientDataJSON),
          attestationObject: GatehouseWebAuthn.toBase64url(response.attestationObject),
          transports: transports
        });
      })
      .then(function () {
        window.location.assign("/account");
      });
  });
})();
