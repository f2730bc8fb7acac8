/** The admin home: how much school data there is, and the latest changes. */
export const ADMIN_HOME = /* GraphQL */ `
  query AdminHome {
    schoolCounts {
      enrolled
      grade1
      grade2
      grade3
      graduates
      withdrawn
      activeClubs
      abolishedClubs
      activeProjects
      endedProjects
    }
    auditBatches(limit: 5) {
      id
      at
      actor
      action
      summary
      status
    }
  }
`;
