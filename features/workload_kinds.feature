Feature: Components of every workload kind are fully rolled only when every old pod is gone
  A v1beta1 component references a Deployment, a StatefulSet or a DaemonSet
  (workloadRef). Its dependents are written only once it is fully rolled
  out: for a StatefulSet every pod at the update revision and no pod of
  another revision left, terminating ones included (a StatefulSet replaces
  pod-N only once the old pod-N is gone); for a DaemonSet the same on every
  node (with maxSurge the new pod runs beside the old one, which then
  terminates). A partitioned StatefulSet keeps old pods below the
  partition: it is never "fully rolled", and what depends on it waits.

  The event log records StatefulSet and DaemonSet pods by their
  controller-revision-hash (docs/eventlog.md); the ordering check judges
  every edge of these graphs as it judges Deployments.

  @real @graph @mutants @kinds
  Scenario: a StatefulSet database is fully rolled before the worker, and the worker before the API
    Given the StatefulSet "db" with 3 replicas, pods ready after 2s, a grace period of 30s and terminating in 12s
    And the Deployments "worker" and "api", each with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on |
      | db        |            |
      | worker    | db         |
      | api       | worker     |
    Then the phase becomes "Completed" within 5 minutes
    And the components were written in the order "db, worker, api"
    And no component's image is written while an old pod of a component it depends on exists
    And every component is "Rolled"
    And the status shows "3/3" components rolled out

  @real @graph @mutants @kinds @nodes-2
  Scenario: a DaemonSet node agent with surge is fully rolled on every node before the API
    Given the DaemonSet "node-agent" with surge 1, unavailable 0, pods ready after 2s, a grace period of 30s and terminating in 12s
    And the Deployment "api" with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component  | depends on |
      | node-agent |            |
      | api        | node-agent |
    Then the phase becomes "Completed" within 5 minutes
    And the components were written in the order "node-agent, api"
    And no component's image is written while an old pod of a component it depends on exists
    And every component is "Rolled"

  @graph @mutants @kinds
  Scenario: a partitioned StatefulSet is never fully rolled, so what depends on it is never written
    Given the StatefulSet "db" with 3 replicas, partition 1, pods ready after 2s and terminating in 5s
    And the Deployment "api" with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on |
      | db        |            |
      | api       | db         |
    Then the phase becomes "Progressing" within 30 seconds
    And the phase stays "Progressing" for 120 seconds
    And the message contains "partition"
    And the image of "api" is never written
