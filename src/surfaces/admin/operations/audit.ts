/** One page of the audit log, and the batch it is filtered to (if any). */
export const AUDIT_LOG = /* GraphQL */ `
  query AuditLog($filter: AuditFilter, $page: Int, $size: Int, $batchId: ID!, $withBatch: Boolean!) {
    auditLog(filter: $filter, page: $page, size: $size) {
      totalPages
      totalElements
      entries {
        id
        batchId
        at
        actor
        action
        entity
        recordId
        label
        operation
        status
        changes {
          field
          before
          after
        }
      }
    }
    auditBatch(id: $batchId) @include(if: $withBatch) {
      id
      at
      actor
      action
      summary
      source
      status
      records
      undoneBy
      undoes
      supersededBy
      undoable
      error
      interrupted
      recoveredAt
      recoveredBy
    }
    interrupted: auditBatches(limit: 10, interrupted: true) {
      id
      at
      actor
      action
      summary
      recoveredAt
      recoveredBy
    }
    resets: auditBatches(limit: 1, action: RESET) {
      id
      at
      actor
      summary
    }
  }
`;

export const UNDO_AUDIT_BATCH = /* GraphQL */ `
  mutation UndoAuditBatch($batchId: ID!, $lang: Language!) {
    undoAuditBatch(batchId: $batchId) {
      batchId
      errors {
        field
        message(lang: $lang)
      }
    }
  }
`;

export const EXPORT_AUDIT_LOG = /* GraphQL */ `
  query ExportAuditLog($filter: AuditFilter, $format: FileFormat!) {
    exportAuditLog(filter: $filter, format: $format) {
      fileName
      contentType
      contentBase64
      rows
    }
  }
`;
