/**
 * What every import and roll-over answers (a dry run, or the applied result): one selection for
 * the four operations below, which differ only in how many changes they list.
 */
const IMPORT_PREVIEW = /* GraphQL */ `
  fragment ImportPreviewFields on ImportPreview {
    uploadId
    entity
    fileName
    removeMissing
    applied
    batchId
    rows
    counts {
      created
      updated
      unchanged
      removed
      refused
    }
    issues {
      sheet
      row
      column
      value
      message(lang: $lang)
    }
    changes(limit: $changeLimit) {
      sheet
      row
      entity
      operation
      recordId
      label
      fields {
        field
        before
        after
      }
    }
  }
`;

/** A dry run of an import (the file travels base64-encoded in the variables). */
export const PREVIEW_IMPORT =
  /* GraphQL */ `
  mutation PreviewImport($input: ImportInput!, $lang: Language!, $changeLimit: Int = 500) {
    previewImport(input: $input) {
      ...ImportPreviewFields
    }
  }
` + IMPORT_PREVIEW;

/** A roll-over touches every student: its preview lists more changes. */
export const PREVIEW_ROLLOVER =
  /* GraphQL */ `
  mutation PreviewRollover($input: RolloverInput!, $lang: Language!, $changeLimit: Int = 2000) {
    previewRollover(input: $input) {
      ...ImportPreviewFields
    }
  }
` + IMPORT_PREVIEW;

export const EXPORT_SCHOOL_DATA = /* GraphQL */ `
  query ExportSchoolData($entity: SchoolEntity!, $format: FileFormat!, $includeGraduates: Boolean) {
    exportSchoolData(entity: $entity, format: $format, includeGraduates: $includeGraduates) {
      fileName
      contentType
      contentBase64
      rows
    }
  }
`;

/** The fields of a background apply the job page shows. */
const SCHOOL_JOB_FIELDS = /* GraphQL */ `
  fragment SchoolJobFields on SchoolJob {
    id
    kind
    state
    written
    total
    error
    result {
      ...ImportPreviewFields
    }
  }
`;

export const START_APPLY_IMPORT =
  /* GraphQL */ `
  mutation StartApplyImport($uploadId: ID!, $lang: Language!, $changeLimit: Int = 500) {
    startApplyImport(uploadId: $uploadId) {
      ...SchoolJobFields
    }
  }
` +
  SCHOOL_JOB_FIELDS +
  IMPORT_PREVIEW;

export const START_APPLY_ROLLOVER =
  /* GraphQL */ `
  mutation StartApplyRollover($uploadId: ID!, $lang: Language!, $changeLimit: Int = 2000) {
    startApplyRollover(uploadId: $uploadId) {
      ...SchoolJobFields
    }
  }
` +
  SCHOOL_JOB_FIELDS +
  IMPORT_PREVIEW;

export const SCHOOL_JOB =
  /* GraphQL */ `
  query SchoolJob($id: ID!, $lang: Language!, $changeLimit: Int = 2000) {
    schoolJob(id: $id) {
      ...SchoolJobFields
    }
  }
` +
  SCHOOL_JOB_FIELDS +
  IMPORT_PREVIEW;
