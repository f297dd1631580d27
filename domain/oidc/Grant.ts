import type { WayInChange } from "../WaysIn.js"
import { sessionsEndedBy } from "../WaysIn.js"

/**
 * Whether a change of the user's ways in ends every grant the user gave to apps: the changes that
 * end every session, because the account may have been in another's hands (a reset, a takeover,
 * an address-change undo) or is closed (deactivation). A grant is not a session otherwise: a new
 * password proven with the current one, or signing out elsewhere, leaves the user's apps signed
 * in, as the user chose them. Deleting the account and withdrawing the app's consent end them too.
 */
export const endsGrants = (change: WayInChange): boolean => sessionsEndedBy(change) === "all"
