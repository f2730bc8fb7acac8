/** The GraphQL operation GET /v1/changes runs; its selection is the REST response shape. */
export const CHANGES_OPERATION = /* GraphQL */ `
  query RestChanges($after: String, $limit: Int) {
    changes(after: $after, limit: $limit) {
      events {
        id
        type
        time
        actor {
          kind
          accountId
        }
        batchId
        data
      }
      nextCursor
    }
  }
`;
