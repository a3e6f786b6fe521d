@informer
Feature: The operator's informers lag or lose events while it upgrades
  The operator reads the cluster through its informer cache, and the same
  cache's watch events wake it. An overloaded informer runs behind the
  API server (the fault "stale"), and a dropped or expired watch loses
  events until the reflector relists (the fault "drop"). Reads and
  wake-ups are then late alike: the operator decides from an old picture
  of the cluster. It must still never write the API while an old worker
  pod exists, write each image once (its writes carry the
  resourceVersion it read, so a write from a stale read is a Conflict),
  and complete once the cache has caught up.

  These are the fault catalog's stale and drop (docs/faults.md), injected
  into the informer model make simulate --faults runs (faults.Cache): from
  the step on, every operator replica reads through informers of its own,
  rebuilt at every cold start. On a real cluster the informers are
  controller-runtime's, fed by kube-apiserver's watches, and cannot be
  held back: the real backend refuses these faults in one line, so the
  scenarios are not tagged @real.

  @sim-only @mutants
  Scenario: the Deployment informer runs 5 seconds behind during the worker rollout
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "stale@0s:for=60s:lag=5s:kind=deployments" is injected
    Then a fault's note matches "^the operator's deployments informer runs 5s behind for 1m0s$" within 1 seconds
    And the phase becomes "Completed" within 3 minutes
    And the worker image is written once
    And the API image is written once
    And the API is neither written nor claimed while an old worker pod exists or terminates

  @sim-only @mutants
  Scenario: every informer of the operator runs 4 events behind from the start of the upgrade
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    And the fault "stale@0s:for=2m:events=4" is injected
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 4 minutes
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists or terminates

  @sim-only @mutants
  Scenario: the operator's watches lose every event for 40 seconds while the worker rolls out
    With every watch cut the operator sees the worker's rollout frozen where
    its cache stopped: it waits for the whole window, although the worker
    finishes rolling out in the meantime, and moves on only once the
    informers relist.
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "drop@0s:for=40s" is injected
    Then a fault's note matches "^all the operator's watches lose every event for 40s, then relist$" within 1 seconds
    And the phase stays "WaitingForWorkers" for 35 seconds
    And the phase becomes "Completed" within 3 minutes
    And the worker image is written once
    And the API image is written once
    And the API is neither written nor claimed while an old worker pod exists or terminates

  @sim-only @mutants
  Scenario: the pod watch is lost while the last old worker pods terminate
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s, a grace period of 20s and terminating in 15s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "drop@5s:for=20s:kind=pods" is injected
    Then the phase becomes "Completed" within 3 minutes
    And the API image is written once
    And the API is neither written nor claimed while an old worker pod exists or terminates

  @sim-only @graph @mutants
  Scenario: a diamond upgrades in order while its Deployment informer lags and its pod watch is lost
    Given the Deployments "db" and "worker", each with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployment "indexer" with 3 replicas, surge 1, unavailable 0, pods ready after 2s, a grace period of 30s and terminating in 25s
    And the Deployment "api" with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And the faults "stale@0s:for=90s:lag=4s:kind=deployments,drop@20s:for=15s:kind=pods" are injected
    When the graph upgrade "upgrade-v2" is applied:
      | component | depends on      |
      | db        |                 |
      | worker    | db              |
      | indexer   | db              |
      | api       | worker, indexer |
    Then the phase becomes "Completed" within 5 minutes
    And "api" is written only after the last old pod of "worker" and of "indexer" is deleted
    And no component's image is written while an old pod of a component it depends on exists
    And every component is "Rolled"
    And each Deployment image was written once
