/**
 * The few parts of oidc-provider v9 (which ships no types) that test/support/OidcProvider.ts
 * uses, as lib/provider.js, lib/models/grant.js and lib/helpers/defaults.js define them.
 */
declare module "oidc-provider" {
  import type { IncomingMessage, ServerResponse } from "node:http"

  export interface ClientMetadata {
    readonly client_id: string
    readonly client_secret?: string
    readonly redirect_uris?: ReadonlyArray<string>
    readonly grant_types?: ReadonlyArray<string>
    readonly response_types?: ReadonlyArray<string>
    readonly token_endpoint_auth_method?: string
  }

  export interface Account {
    readonly accountId: string
    claims(use: string, scope: string): Promise<Record<string, unknown>> | Record<string, unknown>
  }

  export interface PromptDetail {
    readonly name: string
    readonly reasons: ReadonlyArray<string>
    readonly details: {
      readonly missingOIDCScope?: ReadonlyArray<string>
      readonly missingOIDCClaims?: ReadonlyArray<string>
      readonly missingResourceScopes?: Readonly<Record<string, ReadonlyArray<string>>>
    }
  }

  export interface Interaction {
    readonly uid: string
    readonly prompt: PromptDetail
    readonly params: Readonly<Record<string, unknown>>
    readonly session?: { readonly accountId: string; readonly uid?: string }
    readonly grantId?: string
  }

  export interface Grant {
    addOIDCScope(scope: string): void
    addOIDCClaims(claims: ReadonlyArray<string>): void
    addResourceScope(resource: string, scope: string): void
    save(): Promise<string>
  }

  export interface GrantModel {
    new (properties: { accountId: string; clientId: string }): Grant
    find(id: string): Promise<Grant | undefined>
  }

  export interface InteractionResult {
    readonly login?: { readonly accountId: string }
    readonly consent?: { readonly grantId: string }
    readonly error?: string
    readonly error_description?: string
  }

  export interface Configuration {
    readonly clients?: ReadonlyArray<ClientMetadata>
    readonly findAccount?: (ctx: unknown, sub: string) => Promise<Account | undefined> | Account | undefined
    readonly claims?: Readonly<Record<string, ReadonlyArray<string> | null>>
    readonly interactions?: { readonly url?: (ctx: unknown, interaction: Interaction) => string | Promise<string> }
    readonly features?: Readonly<Record<string, { readonly enabled: boolean }>>
    readonly pkce?: { readonly required?: (ctx: unknown, client: unknown) => boolean }
    readonly cookies?: { readonly keys?: ReadonlyArray<string> }
    readonly ttl?: Readonly<Record<string, number>>
    readonly jwks?: { readonly keys: ReadonlyArray<Readonly<Record<string, unknown>>> }
    readonly rotateRefreshToken?: boolean | ((ctx: unknown) => boolean)
  }

  export class Provider {
    constructor(issuer: string, configuration?: Configuration)
    readonly issuer: string
    readonly Grant: GrantModel
    callback(): (request: IncomingMessage, response: ServerResponse) => void
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<Interaction>
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: InteractionResult,
      options?: { readonly mergeWithLastSubmission?: boolean }
    ): Promise<void>
    on(event: string, listener: (...args: ReadonlyArray<unknown>) => void): this
  }

  export default Provider
}
