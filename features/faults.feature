Feature: The operator converges through API errors, restarts and leader changes
  Every decision is derived from what the operator observes, nothing is
  kept in memory, and every image write is guarded by the resourceVersion
  it was decided on. So rejected writes are retried with back-off, a
  restarted operator resumes where the cluster is, and a new leader takes
  over without two writers at once.

  @real @in-process @C08
  Scenario: C08 every write is rejected with Conflict five times first
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And the Deployments are rolled out
    And the first 5 attempts of every write by the operator are rejected with Conflict
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And every write of the operator was rejected 5 times before it succeeded
    And the rejected attempts of each write were spread over at least 70 milliseconds
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real @in-process
  Scenario: the API server answers the operator's next ten calls with 503
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And the fault "unavailable@1:n=10" is injected
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And 10 calls of the operator were failed by the fault
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real @in-process
  Scenario: the operator's first three writes commit, and it is told they timed out
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And the fault "ambiguous@1:n=3" is injected
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And 3 calls of the operator were failed by the fault
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: the operator restarts while the worker rolls out
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 3s and terminating in 5s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the operator restarts
    Then the phase becomes "Completed" within 5 minutes
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @sim-only @C09
  Scenario: C09 the operator is killed between its API calls over and over
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    And the operator is killed before each of its API calls with probability 15% and restarted 2 seconds later
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 30 minutes
    And the operator was killed at least 10 times
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real @process @C09
  Scenario: C09 the operator process is killed with SIGKILL during the worker rollout
    On a real cluster the operator is the product's binary, a process of its
    own; SIGKILL gives it no chance to finish a call or to clean up, and the
    new process starts with a cold cache and knows only what the cluster
    says. The kill moments are drawn from the scenario's seed.
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 3s and terminating in 5s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the operator is killed with SIGKILL 5 times during the worker rollout
    Then the phase becomes "Completed" within 5 minutes
    And every kill came during the worker rollout
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @sim-only @C10
  Scenario: C10 the leader loses its lease in the middle of the worker's rollout
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s and terminating in 10s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    And a second operator replica is on standby under leader election
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the leader's network stalls for 30 seconds
    Then the phase becomes "Completed" within 10 minutes
    And the standby replica took over and wrote
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists
