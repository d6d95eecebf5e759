// /account: times in the browser's own language and time zone, and "Add a passkey"
// (WebAuthn Level 3 §7.1). The page works without this script (times in
// UTC) except for adding a passkey, which needs the browser's API.
(function () {
  "use strict";

  // Times are written in UTC by the server; shown in the browser's own
  // language and time zone where Intl is there (UTC stays otherwise).
  if (window.Intl && Intl.DateTimeFormat) {
    var format = new Intl.DateTimeFormat(document.documentElement.lang || undefined, { dateStyle: "medium", timeStyle: "short" });
    document.querySelectorAll("time[datetime]").forEach(function (element) {
      var moment = new Date(element.getAttribute("datetime"));
      if (!isNaN(moment.getTime())) {
        element.textContent = format.format(moment);
        element.title = element.getAttribute("datetime");
      }
    });
  }

  var card = document.querySelector("main[data-csrf]");
  if (!card || !GatehouseWebAuthn.supported()) {
    return;
  }
  var csrf = card.getAttribute("data-csrf");

  // "Confirm it's you" with a passkey (§7.2), beside the password form.
  var confirmButton = document.getElementById("confirm-passkey");
  if (confirmButton) {
    confirmButton.hidden = false;
    GatehouseWebAuthn.onPress(confirmButton, document.getElementById("confirm-passkey-error"), function () {
      return GatehouseWebAuthn.post("/account/passkeys/confirm-options", { csrf: csrf })
        .then(function (options) {
          return navigator.credentials.get(GatehouseWebAuthn.requestOptions(options));
        })
        .then(function (credential) {
          return GatehouseWebAuthn.post("/account/passkeys/confirm", GatehouseWebAuthn.assertionFields({ csrf: csrf }, credential));
        })
        .then(function (answer) {
          window.location.assign(answer.location);
        });
    });
  }

  var button = document.getElementById("add-passkey");
  if (!button) {
    return;
  }
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
