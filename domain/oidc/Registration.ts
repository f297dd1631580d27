import { Data } from "effect"
import { loopbackParts, redirectUriProblem } from "./Client.js"

/** What a self-registering client (RFC 7591) is registered as: a public client of these URIs. */
export interface Registration {
  readonly name: string
  readonly redirect_uris: ReadonlyArray<string>
  readonly post_logout_redirect_uris: ReadonlyArray<string>
}

export type RegistrationDecision = Data.TaggedEnum<{
  Register: { readonly registration: Registration }
  /** RFC 7591 §3.2.2: `invalid_redirect_uri` or `invalid_client_metadata`. */
  Refuse: { readonly error: "invalid_redirect_uri" | "invalid_client_metadata"; readonly error_description: string }
}>
export const RegistrationDecision = Data.taggedEnum<RegistrationDecision>()

const refuse = (error: "invalid_redirect_uri" | "invalid_client_metadata", error_description: string) =>
  RegistrationDecision.Refuse({ error, error_description })

const isStrings = (value: unknown): value is ReadonlyArray<string> =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/** A self-registered client's redirect URI: https, or http on loopback (a native app or an agent on this machine). */
const registrableUriProblem = (uri: string): string | undefined => {
  const problem = redirectUriProblem(uri)
  if (problem !== undefined) return problem
  const url = new URL(uri)
  if (url.protocol === "https:") return undefined
  if (url.protocol === "http:" && (loopbackParts(uri) !== undefined || url.hostname === "localhost")) return undefined
  return "must be https or loopback http for a client that registers itself"
}

/**
 * Whether a client's metadata (RFC 7591 §2) can be registered, under the policy that clients
 * registering themselves are public (`token_endpoint_auth_method` none: they get no secret and
 * prove themselves with PKCE), use the code flow only, and return to https or loopback URIs.
 * Metadata this server does not use is ignored (§2); a client never registers itself first-party.
 */
export const decideRegistration = (metadata: unknown): RegistrationDecision => {
  if (typeof metadata !== "object" || metadata === null || Array.isArray(metadata))
    return refuse("invalid_client_metadata", "the body must be a JSON object of client metadata")
  const fields = metadata as Readonly<Record<string, unknown>>
  const method = fields.token_endpoint_auth_method
  if (method !== undefined && method !== "none")
    return refuse(
      "invalid_client_metadata",
      "clients that register themselves are public: token_endpoint_auth_method must be none"
    )
  const grants = fields.grant_types
  if (
    grants !== undefined &&
    (!isStrings(grants) || grants.some((grant) => grant !== "authorization_code" && grant !== "refresh_token"))
  )
    return refuse("invalid_client_metadata", "grant_types may be authorization_code and refresh_token only")
  const responses = fields.response_types
  if (responses !== undefined && (!isStrings(responses) || responses.some((type) => type !== "code")))
    return refuse("invalid_client_metadata", "response_types may be code only")
  const redirects = fields.redirect_uris
  if (!isStrings(redirects) || redirects.length === 0 || redirects.length > 10)
    return refuse("invalid_redirect_uri", "redirect_uris must list one to ten URIs")
  for (const uri of redirects) {
    const problem = registrableUriProblem(uri)
    if (problem !== undefined) return refuse("invalid_redirect_uri", `${JSON.stringify(uri)} ${problem}`)
  }
  const logouts = fields.post_logout_redirect_uris ?? []
  if (!isStrings(logouts) || logouts.length > 10)
    return refuse("invalid_client_metadata", "post_logout_redirect_uris must list at most ten URIs")
  for (const uri of logouts) {
    const problem = registrableUriProblem(uri)
    if (problem !== undefined) return refuse("invalid_client_metadata", `${JSON.stringify(uri)} ${problem}`)
  }
  const name = fields.client_name
  if (name !== undefined && (typeof name !== "string" || name.trim() === "" || name.length > 100))
    return refuse("invalid_client_metadata", "client_name must be 1 to 100 characters")
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters is the point
  if (typeof name === "string" && /[\u0000-\u001F\u007F-\u009F]/.test(name))
    return refuse("invalid_client_metadata", "client_name must not contain control characters")
  return RegistrationDecision.Register({
    registration: {
      // Unnamed, the app is called by where it sends people back, as its consent page shows it.
      name: typeof name === "string" ? name.trim() : new URL(redirects[0] as string).host || "Unnamed app",
      redirect_uris: [...new Set(redirects)],
      post_logout_redirect_uris: [...new Set(logouts)]
    }
  })
}

/**
 * A Client ID Metadata Document (draft-ietf-oauth-client-id-metadata-document), fetched from the
 * URL that is its `client_id`: registered as a client that registers itself would be, if it names
 * that very URL as its `client_id` and asks for no secret.
 */
export const decideMetadataDocument = (url: string, document: unknown): RegistrationDecision => {
  if (typeof document !== "object" || document === null || Array.isArray(document))
    return refuse("invalid_client_metadata", "the client's metadata document is not a JSON object")
  const fields = document as Readonly<Record<string, unknown>>
  if (fields.client_id !== url)
    return refuse("invalid_client_metadata", "the metadata document's client_id is not the URL it was fetched from")
  if (fields.client_secret !== undefined || fields.client_secret_expires_at !== undefined)
    return refuse("invalid_client_metadata", "a metadata document cannot carry a secret")
  if (fields.token_endpoint_auth_method !== "none" && fields.token_endpoint_auth_method !== undefined)
    return refuse("invalid_client_metadata", "a metadata document's client authenticates with none only")
  return decideRegistration(fields)
}

/** Whether a client_id is a metadata document's URL: https, or http on a private address when allowed. */
export const isMetadataDocumentUrl = (clientId: string, allowHttp: boolean): boolean => {
  if (!/^https?:\/\//i.test(clientId)) return false
  try {
    const url = new URL(clientId)
    if (url.hash !== "" || url.username !== "" || url.password !== "" || url.pathname === "/") return false
    return url.protocol === "https:" || (allowHttp && url.protocol === "http:")
  } catch {
    return false
  }
}
