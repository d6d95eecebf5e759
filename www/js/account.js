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
  var passwordField = document.getElementById("passkey-password");
  var error = document.getElementById("passkey-error");
  button.hidden = false;
  document.querySelectorAll(".passkey-add").forEach(function (field) { field.hidden = false; });

  GatehouseWebAuthn.onPress(button, error, function () {
    // The current password first: a signed-in browser alone adds no passkey.
    return GatehouseWebAuthn.post("/account/passkeys/options", { csrf: csrf, current: passwordField ? passwordField.value : "" })
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
