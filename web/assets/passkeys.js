// The pages' passkey script (src/surfaces/web/shell.ts, passkeyScripts, loads it after
// @simplewebauthn/browser's bundle, which defines SimpleWebAuthnBrowser). Every page works without
// it: what it drives is hidden ([data-passkey-offer]) until it finds WebAuthn in the browser.
//
// A form[data-passkey] holds a hidden `response` field, which this fills with the browser's
// answer before submitting the form like any other:
// - data-passkey="get" (the login page, the second step of a sign-in): the options come from
//   data-options (POST, with the form's CSRF token). Its button runs the ceremony; with
//   data-autofill (the email field's id) the browser also offers the person's passkeys among the
//   field's suggestions (conditional mediation), started when the page opens and renewed before
//   its challenge expires.
// - data-passkey="create" (adding a passkey in /console/account): the options are in
//   data-options-json; its button runs the ceremony.
(() => {
  const webauthn = globalThis.SimpleWebAuthnBrowser;
  const forms = [...document.querySelectorAll('form[data-passkey]')];
  if (!webauthn || forms.length === 0 || !webauthn.browserSupportsWebAuthn()) return;
  for (const note of document.querySelectorAll('[data-passkey-unsupported]')) note.hidden = true;
  for (const form of forms) {
    const offer = form.closest('[data-passkey-offer]');
    if (offer) offer.hidden = false;
    if (form.dataset.passkey === 'create') setUpCreate(form);
    else setUpGet(form);
  }

  /** Shows a message in the form's live region (role="status"). */
  function say(form, text) {
    const status = form.querySelector('[data-passkey-status]');
    if (status) status.textContent = text ?? '';
  }

  /** Puts the browser's answer in the form, with the login form's "keep me signed in", and sends it. */
  function send(form, response) {
    form.elements.namedItem('response').value = JSON.stringify(response);
    const remember = document.getElementById('remember');
    const field = form.elements.namedItem('remember');
    if (remember && field) field.value = remember.checked ? 'yes' : '';
    form.submit();
  }

  function setUpGet(form) {
    const button = form.querySelector('[data-passkey-start]');
    const email = form.dataset.autofill ? document.getElementById(form.dataset.autofill) : null;
    let renewal;

    /** The ceremony's options, made (and their challenge stored) for this login by the server. */
    async function options() {
      const res = await fetch(form.dataset.options, {
        method: 'POST',
        credentials: 'same-origin',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ csrf: form.elements.namedItem('csrf').value }),
      });
      if (!res.ok) throw new Error(`passkey options: ${res.status}`);
      return res.json();
    }

    /** The passkeys among the email field's suggestions, until the person picks one (or presses the button). */
    async function offerInAutofill() {
      clearTimeout(renewal);
      let optionsJSON;
      try {
        optionsJSON = await options();
      } catch {
        return;
      }
      // A little before its challenge expires, the offer is made again with a new one.
      renewal = setTimeout(offerInAutofill, Math.max(30_000, (optionsJSON.timeout ?? 300_000) - 30_000));
      try {
        send(form, await webauthn.startAuthentication({ optionsJSON, useBrowserAutofill: true }));
      } catch {
        // Replaced by the button's ceremony or a renewal, or dropped by the browser: nothing to say.
      }
    }

    button?.addEventListener('click', async () => {
      clearTimeout(renewal);
      say(form, form.dataset.working);
      button.disabled = true;
      try {
        const optionsJSON = await options();
        send(form, await webauthn.startAuthentication({ optionsJSON }));
      } catch {
        say(form, form.dataset.cancelled);
        button.disabled = false;
        if (email) void offerInAutofill();
      }
    });

    if (email) {
      void webauthn.browserSupportsWebAuthnAutofill().then((supported) => {
        if (!supported) return;
        // The field's last autocomplete token says that passkeys belong in its suggestions.
        email.setAttribute('autocomplete', 'username webauthn');
        void offerInAutofill();
      });
    }
  }

  function setUpCreate(form) {
    const button = form.querySelector('[data-passkey-start]');
    button?.addEventListener('click', async () => {
      say(form, form.dataset.working);
      button.disabled = true;
      try {
        const optionsJSON = JSON.parse(form.dataset.optionsJson);
        send(form, await webauthn.startRegistration({ optionsJSON }));
      } catch (err) {
        // An authenticator that holds one of the account's passkeys already refuses (excludeCredentials).
        const duplicate = err && err.code === 'ERROR_AUTHENTICATOR_PREVIOUSLY_REGISTERED';
        say(form, duplicate ? form.dataset.duplicate : form.dataset.cancelled);
        button.disabled = false;
      }
    });
  }
})();
