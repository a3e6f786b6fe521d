Feature: Components are upgraded in dependency order, independent ones in parallel
  An upgrades.lunadas.dev/v1beta1 ApplicationUpgrade lists components, each
  a Deployment with its target image and the components it depends on (the
  ones it calls). A component's image is written only once every component
  it depends on is fully rolled out — every old pod gone, not merely the
  counters saying done. Components with nothing left to wait for roll at
  the same time, so a wide application takes about as long as its slowest
  component, not the sum of all.

  A component whose rollout fails is Failed; everything that depends on it,
  directly or not, is Blocked and never written; branches that do not
  depend on it still finish. A dependency cycle is refused when the
  upgrade is created. v1alpha1 upgrades (a worker and an API) keep working:
  they are the two-component graph "api depends on worker".

  In the tables, "depends on" lists component names separated by commas;
  each component's Deployment has the component's name, and its image moves
  from registry.example.com/<name>:v1.0.0 to :v2.0.0 unless the "image"
  column says otherwise.

  @real @graph @mutants
  Scenario: a chain of four is written one component at a time, each after the one it calls is fully rolled out
    Given the Deployments "db", "cache", "worker" and "api", each with 2 replicas, surge 1, unavailable 0, pods ready after 2s, a grace period of 10s and terminating in 8s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on |
      | db        |            |
      | cache     | db         |
      | worker    | cache      |
      | api       | worker     |
    Then the phase becomes "Completed" within 5 minutes
    And the components were written in the order "db, cache, worker, api"
    And no component's image is written while an old pod of a component it depends on exists
    And every component is "Rolled"
    And each Deployment image was written once
    And the status shows "4/4" components rolled out

  @real @graph @mutants
  Scenario: a diamond writes the caller only when both of its dependencies are fully rolled out
    Given the Deployments "db" and "worker", each with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployment "indexer" with 3 replicas, surge 1, unavailable 0, pods ready after 2s, a grace period of 30s and terminating in 25s
    And the Deployment "api" with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on      |
      | db        |                 |
      | worker    | db              |
      | indexer   | db              |
      | api       | worker, indexer |
    Then the phase becomes "Completed" within 5 minutes
    And "worker" and "indexer" were rolling out at the same time
    And "api" is written only after the last old pod of "worker" and of "indexer" is deleted
    And no component's image is written while an old pod of a component it depends on exists
    And every component is "Rolled"

  @graph
  Scenario: ten independent components roll in parallel, in about the time of one
    Given 10 Deployments "svc-1" to "svc-10", each with 2 replicas, surge 1, unavailable 0, pods ready after 5s and terminating in 10s
    And the Deployments are rolled out
    When the graph upgrade "one" of "svc-1" alone is applied
    And the phase of "one" becomes "Completed" within 5 minutes
    And the graph upgrade "wide" of every Deployment, none depending on another, to the tag "v3.0.0" is applied
    Then the phase of "wide" becomes "Completed" within 5 minutes
    And "wide" took less than 2 times as long as "one"
    And every component of "wide" is "Rolled"

  @real @graph
  Scenario: a component that cannot roll out blocks only what depends on it
    Given the Deployments "db", "cache", "worker", "api", "search" and "indexer", each with 2 replicas, surge 1, unavailable 0, a progress deadline of 60s, pods ready after 2s and terminating in 3s
    And the Deployments are rolled out
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on | image                                     |
      | db        |            |                                           |
      | cache     | db         | registry.example.com/cache:does-not-exist |
      | worker    | cache      |                                           |
      | api       | worker     |                                           |
      | search    |            |                                           |
      | indexer   | search     |                                           |
    Then the phase becomes "Failed" within 2 minutes
    And the component "cache" is "Failed"
    And the components "worker" and "api" are "Blocked"
    And the components "db", "search" and "indexer" are "Rolled"
    And the images of "worker" and "api" are never written
    And the message contains "cache"
    And no component's image is written while an old pod of a component it depends on exists

  @real @graph
  Scenario: a dependency cycle is refused at admission, naming the cycle
    Given the Deployments "a", "b" and "c", each with 1 replica
    And the Deployments are rolled out
    When the graph upgrade "circular" is applied:
      | component | depends on |
      | a         | c          |
      | b         | a          |
      | c         | b          |
    Then the upgrade is refused with a message containing "dependency cycle a → c → b → a"
    And the upgrade "circular" does not exist
    And no Deployment image is written

  @real @graph
  Scenario: a v1alpha1 upgrade reads as a two-component graph, and a graph survives a v1alpha1 client
    Given a worker Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments "db", "cache", "worker-b" and "api-b", each with 1 replica
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then "upgrade-v2" read as v1beta1 has the components "worker" and "api", "api" depending on "worker"
    When the graph upgrade "chain" is applied:
      | component | depends on |
      | db        |            |
      | cache     | db         |
      | worker-b  | cache      |
      | api-b     | worker-b   |
    And "chain" is read as v1alpha1 and written back unchanged
    Then "chain" read as v1beta1 still has 4 components, "api-b" depending on "worker-b"
    And the phase of "upgrade-v2" becomes "Completed" within 5 minutes
    And the phase of "chain" becomes "Completed" within 5 minutes

  # Where the validating webhook runs, it refuses the second upgrade at
  # once; two upgrades created together can both pass it (it reads a
  # cache), and then the operator holds the newer one. Either way the
  # message names the first, and nothing of the second is written before
  # the first is finished.
  @real @graph
  Scenario: a second upgrade of a Deployment another upgrade is still upgrading is held, naming the first
    Given the Deployments "db" and "api", each with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    When the graph upgrade "first" is applied:
      | component | depends on |
      | db        |            |
      | api       | db         |
    And the graph upgrade "second" is applied:
      | component | depends on | image                            |
      | api       |            | registry.example.com/api:v3.0.0 |
    Then the upgrade "second" is refused or held with a message naming "first" within 30 seconds
    And the phase of "first" becomes "Completed" within 5 minutes
    When "second" is applied again if it was refused
    Then the phase of "second" becomes "Completed" within 5 minutes
    And "second" wrote no image before "first" was "Completed"
