import { Either } from "effect"
import type { ParseError } from "effect/ParseResult"
import type { User } from "../../../domain/User.js"
import { remembered } from "../../remembered.js"
import { userOfRow } from "../userRows.js"

type Columns = Readonly<Record<string, unknown>>

interface Decoded {
  readonly columns: Columns
  readonly count: number
  readonly user: User
}

/** Whether `row` holds, column for column, what `known` held. */
const sameColumns = (known: Decoded, row: Columns): boolean => {
  let count = 0
  for (const name in row) {
    if (row[name] !== known.columns[name]) return false
    count++
  }
  return count === known.count
}

/**
 * Users from their rows, each row decoded once while it holds the same values: the user decoded
 * from a row is kept by its id (the last `capacity` ids), and a row read later with the very same
 * value in every column answers that same user. Every read still goes to the database, and a row
 * that changed in any column (a role, a flag, the password, the credential version) is decoded
 * afresh: only the decoding, a pure function of the row, is saved.
 */
export const sameRowsSameUsers = (capacity = 4096) => {
  const decoded = remembered<unknown, Decoded>(capacity)
  return (columns: Columns): Either.Either<User, ParseError> => {
    const known = decoded.get(columns.id)
    if (known !== undefined && sameColumns(known, columns)) return Either.right(known.user)
    return Either.map(userOfRow(columns), (user) => {
      decoded.set(columns.id, { columns, count: Object.keys(columns).length, user })
      return user
    })
  }
}
