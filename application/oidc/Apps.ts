import { DateTime, Effect, Option } from "effect"
import { UserId } from "../../domain/User.js"
import { Audit } from "../Audit.js"
import { Consents } from "../ports/Consents.js"
import { OidcClients } from "../ports/OidcClients.js"
import { OidcGrants } from "../ports/OidcGrants.js"
import { Transaction } from "../ports/Transaction.js"

/** An app holding the user's consent, as GET /me/apps shows it. */
export interface AppView {
  readonly client_id: string
  readonly name: string
  readonly scopes: ReadonlyArray<string>
  readonly granted_at: DateTime.Utc
  /** When one of its grants was last used (a token issued or refreshed); null when none is live. */
  readonly last_used_at: DateTime.Utc | null
}

/**
 * The user in charge of the apps they let in (`GET /me/apps`, `DELETE /me/apps/{client_id}`):
 * each app with what it was granted and when it last used it, and a withdrawal that ends every
 * grant of that app at once, audited in the same transaction.
 */
export class Apps extends Effect.Service<Apps>()("app/Apps", {
  effect: Effect.gen(function* () {
    const consents = yield* Consents
    const grants = yield* OidcGrants
    const clients = yield* OidcClients
    const audit = yield* Audit
    const tx = yield* Transaction

    const list = (userId: string) =>
      Effect.gen(function* () {
        const now = yield* DateTime.now
        const live = yield* grants.liveOfUser(userId, now)
        const held = yield* consents.ofUser(userId)
        const apps: Array<AppView> = []
        for (const consent of held) {
          const client = yield* clients.find(consent.client_id)
          if (Option.isNone(client)) continue
          const used = live.find((grant) => grant.client_id === consent.client_id)
          apps.push({
            client_id: consent.client_id,
            name: client.value.name,
            scopes: consent.scopes,
            granted_at: consent.granted_at,
            last_used_at: used?.last_used_at ?? null
          })
        }
        return apps
      })

    /** Withdraws the consent and ends every grant of the app; false when the user had not let it in. */
    const withdraw = (userId: string, clientId: string) =>
      tx.transaction(
        Effect.gen(function* () {
          const now = yield* DateTime.now
          const ended = yield* grants.revokeOfUser(userId, now, clientId)
          const withdrawn = yield* consents.withdraw(userId, clientId)
          if (!withdrawn && ended === 0) return false
          yield* audit.append({
            type: "oidc.consent_withdrawn",
            user_id: UserId.make(userId),
            details: { client_id: clientId, grants_ended: ended }
          })
          return true
        })
      )

    return { list, withdraw } as const
  })
}) {}
