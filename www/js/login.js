// Progressive enhancement for /login.html; the form works fully without it.
// - prefills the email from ?login_hint= when nginx's SSI could not
//   (hints outside the simple pattern it decodes, e.g. with "+"),
// - disables the button while the form is being submitted, and enables it
//   again when the page comes back from the back/forward cache.
(function () {
  "use strict";

  var form = document.querySelector("form.login");
  if (!form) {
    return;
  }
  var email = form.elements.namedItem("email");
  var button = form.querySelector("button[type=submit]");
  var label = button ? button.textContent : "";

  var hint = null;
  try {
    hint = new URLSearchParams(window.location.search).get("login_hint");
  } catch (error) {
    hint = null;
  }
  if (email && !email.value && hint) {
    email.value = hint.slice(0, 254);
  }

  form.addEventListener("submit", function () {
    if (!button) {
      return;
    }
    // After the submit event, so the submission itself is not affected.
    window.setTimeout(function () {
      button.disabled = true;
      // The page's language: the label comes from the catalogue, via the page.
      button.textContent = button.getAttribute("data-busy-label") || label;
    }, 0);
  });

  window.addEventListener("pageshow", function () {
    if (button) {
      button.disabled = false;
      button.textContent = label;
    }
  });
})();
