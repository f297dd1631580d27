import type { LinkPage } from "../../../domain/Mail.js"
import { escapeHtml } from "../../../domain/Text.js"

/** What a hosted page needs to know: its product's name and the API route it completes the flow with. */
export interface PageOptions {
  readonly product: string
  /** The confirm route, relative to the page (no leading slash): a proxy serving the service under a path keeps it. */
  readonly endpoint: string
  readonly passwordMinLength: number
  /** Where "Back to …" leads once the page is done with its link: APP_URL, else PUBLIC_URL's origin. */
  readonly returnUrl: string
}

/**
 * The frame both pages share. Script and styles come from the service by relative address, so
 * that a PUBLIC_URL with a path (a proxy that strips it) still finds them. The form stays hidden
 * until the script shows it: without script there is nothing it could do.
 */
const frame = (purpose: LinkPage, title: string, options: PageOptions, body: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="referrer" content="no-referrer">
  <meta name="robots" content="noindex">
  <meta name="portcullis-endpoint" content="${escapeHtml(options.endpoint)}">
  <title>${escapeHtml(title)} · ${escapeHtml(options.product)}</title>
  <link rel="stylesheet" href="hosted/pages.css">
  <script src="hosted/pages.js" defer></script>
</head>
<body data-page="${purpose}">
<main>
  <p class="product">${escapeHtml(options.product)}</p>
  <h1>${escapeHtml(title)}</h1>
  <noscript><p>This page needs JavaScript to finish. Turn it on and open the link from the mail again.</p></noscript>
${body}
  <div id="result" role="status" aria-live="polite" tabindex="-1">
    <p id="result-detail"></p>
    <ul id="result-rules"></ul>
  </div>
  <p id="back" hidden><a href="${escapeHtml(options.returnUrl)}">Back to ${escapeHtml(options.product)}</a></p>
</main>
</body>
</html>
`

/**
 * /verify-email: one button, not a confirmation on load, because mail scanners open links (some
 * run their scripts too) and would spend the token before its owner does.
 */
export const verifyEmailPage = (options: PageOptions) =>
  frame(
    "verify-email",
    "Confirm your email address",
    options,
    `  <form id="form" hidden>
    <p>Press the button to confirm the email address of your account.</p>
    <button type="submit">Confirm my email address</button>
  </form>`
  )

/** /reset-password: the new password twice, so that a typo does not lock its owner out. */
export const resetPasswordPage = (options: PageOptions) =>
  frame(
    "reset-password",
    "Choose a new password",
    options,
    `  <form id="form" hidden>
    <label for="new-password">New password</label>
    <input id="new-password" name="new_password" type="password" autocomplete="new-password" required aria-describedby="password-hint">
    <p id="password-hint" class="hint">At least ${options.passwordMinLength} characters.</p>
    <label for="repeat-password">New password again</label>
    <input id="repeat-password" name="repeat_password" type="password" autocomplete="new-password" required>
    <button type="submit">Set the new password</button>
  </form>`
  )

/**
 * /confirm-email: one button, for the reason /verify-email has one. Both links of a change open
 * it (the new address's and the current one's); the answer says which one is still awaited.
 */
export const confirmEmailPage = (options: PageOptions) =>
  frame(
    "confirm-email",
    "Confirm the change of email address",
    options,
    `  <form id="form" hidden>
    <p>Press the button to confirm moving your account to its new email address. The account moves once the links mailed to both addresses are used; then your other sessions end.</p>
    <button type="submit">Confirm the change</button>
  </form>`
  )

/**
 * /undo-email-change: it asks before it undoes, and says what undoing does; once done, it offers
 * the password reset the restored address needs.
 */
export const undoEmailChangePage = (options: PageOptions) =>
  frame(
    "undo-email-change",
    "Undo the change of email address",
    options,
    `  <form id="form" hidden>
    <p>If you did not move your account to another address, undo it. The account comes back to this address; every session ends, the password is cleared, and passkeys and linked sign-ins added since the move are removed. You then choose a new password by a password reset.</p>
    <button type="submit">Undo the change</button>
  </form>
  <form id="reset" hidden>
    <p>Send a password reset link to <strong id="restored"></strong> to choose a new password.</p>
    <button type="submit">Send me a password reset link</button>
  </form>`
  )

/**
 * /sign-in: one button that spends the mailed link, for a scanner must not sign anyone in. In
 * cookie mode the answer's cookies keep the browser signed in to the service.
 */
export const signInPage = (options: PageOptions, bearer: { readonly handOff: string | undefined } | undefined) =>
  frame(
    "sign-in",
    "Sign in",
    options,
    bearer === undefined
      ? `  <form id="form" hidden>
    <p>Press the button to sign in with the link from your mail.</p>
    <button type="submit">Sign in</button>
  </form>`
      : // Bearer mode: a session's tokens are the app's to keep, so this page never spends the link;
        // it hands the link on to the app (APP_URL), or says where to finish signing in.
        `  <form id="form" hidden data-hand-off="${escapeHtml(bearer.handOff ?? "")}">
    <p>Press the button to go on to ${escapeHtml(options.product)}, which signs you in with this link.</p>
    <button type="submit">Continue to ${escapeHtml(options.product)}</button>
  </form>`
  )

// The body's padding keeps the card off a phone's edges; from 32rem on, the margin centres it.
export const pageStyles = `body { font: 16px/1.5 system-ui, sans-serif; margin: 0; padding: 0 1rem; color: #1b1b1b; background: #f6f6f4; }
main { max-width: 30rem; margin: 1.5rem auto; overflow-wrap: anywhere; padding: 1.5rem; background: #fff; border: 1px solid #ccc; border-radius: 6px; }
.product { margin: 0; font-weight: 600; }
h1 { font-size: 1.4rem; margin: 0.5rem 0 1rem; }
label { display: block; margin-top: 0.75rem; font-weight: 600; }
input { font: inherit; width: 100%; box-sizing: border-box; padding: 0.45rem; border: 1px solid #767676; border-radius: 4px; }
input[aria-invalid="true"] { border-color: #b00020; }
.hint { margin: 0.25rem 0 0; font-size: 0.9rem; color: #555; }
button { font: inherit; margin-top: 1rem; padding: 0.5rem 1rem; border: 0; border-radius: 4px; background: #005fcc; color: #fff; cursor: pointer; }
button[disabled] { background: #767676; cursor: progress; }
:focus-visible { outline: 3px solid #005fcc; outline-offset: 2px; }
#result:empty, #result:not([data-kind]) { display: none; }
#result { margin-top: 1rem; padding: 0.75rem 1rem; border-radius: 6px; background: #e7f4ea; }
#result[data-kind="error"] { background: #fbe7e7; }
#result p { margin: 0; }
#result:focus { outline: none; }
#result ul:empty { display: none; }
#back { margin: 1rem 0 0; }
a { color: #005fcc; }
`

/**
 * Where "Back to …" leads when APP_URL is unset: the flow is over, nothing is left to do here,
 * and the operator is told what would send people back to the app instead. No script.
 */
export const donePage = (product: string) => `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="robots" content="noindex">
  <title>Done · ${escapeHtml(product)}</title>
  <link rel="stylesheet" href="pages.css">
</head>
<body data-page="done">
<main>
  <p class="product">${escapeHtml(product)}</p>
  <h1>You are done here</h1>
  <p>You can close this page and go back to ${escapeHtml(product)}.</p>
  <p class="note">For whoever runs ${escapeHtml(product)}: set <code>SERVICE_APP_URL</code> to your app's address, and this page's link leads there instead.</p>
</main>
</body>
</html>
`
