import { Context, type Effect } from "effect"
import type { TokenError, TokenExpiredError } from "../../domain/errors.js"
import type { TokenClaims, TokenPayload, TokenPurpose } from "../../domain/Token.js"

/** Signed tokens. The signer stamps the issuer and audience; verification expects one purpose. */
export class TokenSigner extends Context.Tag("app/TokenSigner")<
  TokenSigner,
  {
    readonly sign: (claims: TokenClaims) => Effect.Effect<string>
    readonly verify: (
      token: string,
      purpose: TokenPurpose
    ) => Effect.Effect<TokenPayload, TokenError | TokenExpiredError>
  }
>() {}
