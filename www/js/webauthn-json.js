// WebAuthn's binary members travel as base64url (WebAuthn Level 3 §5.1.8,
// §5.1.9, the JSON forms): the server's options are turned into the
// ArrayBuffers navigator.credentials wants, and the browser's answer into
// form fields for the server. Shared by /js/login.js and /js/account.js.
var GatehouseWebAuthn = (function () {
  "use strict";

  function toBytes(base64url) {
    var base64 = base64url.replace(/-/g, "+").replace(/_/g, "/");
    var text = atob(base64 + "===".slice((base64.length + 3) % 4));
    var bytes = new Uint8Array(text.length);
    for (var i = 0; i < text.length; i++) { bytes[i] = text.charCodeAt(i); }
    return bytes.buffer;
  }

  function toBase64url(buffer) {
    var bytes = new Uint8Array(buffer), text = "";
    for (var i = 0; i < bytes.length; i++) { text += String.fromCharCode(bytes[i]); }
    return btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
  }

  function supported() {
    return !!(window.PublicKeyCredential && navigator.credentials && window.fetch);
  }

  // POSTs a form-encoded body to the issuer (same origin) and parses JSON.
  function post(path, fields) {
    return fetch(path, {
      method: "POST",
      credentials: "same-origin",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams(fields).toString()
    }).then(function (response) {
      return response.json().then(function (body) {
        if (!response.ok) { throw new Error(body.error_description || body.error || "refused"); }
        return body;
      });
    });
  }

  function creationOptions(json) {
    json.challenge = toBytes(json.challenge);
    json.user.id = toBytes(json.user.id);
    json.excludeCredentials = (json.excludeCredentials || []).map(function (descriptor) {
      return { type: descriptor.type, id: toBytes(descriptor.id) };
    });
    return { publicKey: json };
  }

  function requestOptions(json) {
    json.challenge = toBytes(json.challenge);
    return { publicKey: json };
  }

  // What `navigator.credentials.get()` answered, as the form fields the
  // issuer's assertion endpoints read (`fields` first: req or csrf).
  function assertionFields(fields, credential) {
    var response = credential.response;
    fields.id = toBase64url(credential.rawId);
    fields.clientDataJSON = toBase64url(response.clientDataJSON);
    fields.authenticatorData = toBase64url(response.authenticatorData);
    fields.signature = toBase64url(response.signature);
    fields.userHandle = response.userHandle ? toBase64url(response.userHandle) : "";
    return fields;
  }

  // Runs `ceremony` when `button` is pressed: the button is disabled
  // meanwhile; a failure is shown in `error` as `prefix` plus its reason,
  // and announced only then (a hidden alert would count as one on the page).
  // The failure's wording is the page's (its data-message, in the page's
  // language); the reason after it is the browser's or the issuer's own.
  function onPress(button, error, ceremony) {
    var prefix = error.getAttribute("data-message") || "";
    button.addEventListener("click", function () {
      button.disabled = true;
      error.hidden = true;
      ceremony().catch(function (reason) {
        error.textContent = prefix + (reason && reason.message ? ": " + reason.message : "") + ".";
        error.setAttribute("role", "alert");
        error.hidden = false;
        button.disabled = false;
      });
    });
  }

  return { toBytes: toBytes, toBase64url: toBase64url, supported: supported, post: post,
           creationOptions: creationOptions, requestOptions: requestOptions, assertionFields: assertionFields, onPress: onPress };
})();
