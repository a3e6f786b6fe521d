Feature: Failures are reported, named and never followed by the API write
  A rollout that cannot finish — an image that cannot be pulled — fails the
  upgrade from the pods' own state, well before the Deployment's progress
  deadline. Configuration errors (a missing Deployment, an ambiguous
  container) fail it at once with a message that says what to fix; fixing
  the spec starts the upgrade over.

  @real @C06
  Scenario: C06 the new worker image cannot be pulled
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, a progress deadline of 30s, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:does-not-exist"
    Then the phase becomes "Failed" within 15 seconds
    And the message names the image pull error
    And the upgrade failed before the worker's progress deadline
    And the API image is not written

  @real @C07
  Scenario: C07 a worker scaled up from zero with an image that cannot be pulled
    Given a worker Deployment with 0 replicas, the image "registry.example.com/job-worker:does-not-exist", a progress deadline of 30s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the worker Deployment is scaled to 2 replicas
    And the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:does-not-exist"
    Then the phase becomes "Failed" within 15 seconds
    And the message names the image pull error
    And the upgrade failed before the worker's progress deadline
    And the API image is not written

  @real @C11
  Scenario: C11 no container name while the worker has two containers
    Given a worker Deployment with 1 replica, containers "worker" and "sidecar"
    And an API Deployment with 1 replica
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with no worker container name
    Then the phase becomes "Failed" within 30 seconds
    And the message contains "worker, sidecar"
    And the message contains "containerName"
    And no Deployment image is written

  @real @C12
  Scenario: C12 the worker Deployment does not exist, then the upgrade is recreated
    Given a worker Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker Deployment "job-wroker"
    Then the phase becomes "Failed" within 30 seconds
    And the message names the worker Deployment "job-wroker"
    And no Deployment image is written
    Then changing the upgrade "upgrade-v2" to the worker Deployment "job-worker" is refused with a message containing "deploymentRef is immutable"
    When the upgrade "upgrade-v2" is deleted and "upgrade-v2b" is applied with the worker Deployment "job-worker"
    Then the phase of "upgrade-v2b" becomes "Completed" within 5 minutes
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: a failed rollout recovers when the spec names a good image
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, a progress deadline of 30s, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:does-not-exist"
    Then the phase becomes "Failed" within 30 seconds
    When the upgrade "upgrade-v2" is changed to the worker image "registry.example.com/job-worker:v2.0.0"
    Then the phase becomes "Completed" within 5 minutes
    And the status shows the worker image "job-worker:v2.0.0" and the API image "job-api:v2.0.0"
    And the API is neither written nor claimed while an old worker pod exists

  @real @stale-deadline
  Scenario: a spec corrected back to the running image after the progress deadline fired completes
    The real Deployment controller publishes the corrected generation as
    observed while still carrying the failed ReplicaSet's deadline (no
    progress is counted when the old ReplicaSet becomes the new one again):
    that condition is not about the current template and is ignored.
    Given a worker Deployment with 1 replica, surge 1, unavailable 0, a progress deadline of 10s, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:does-not-exist"
    Then the phase becomes "Failed" within 30 seconds
    When the worker's progress deadline has passed
    And the upgrade "upgrade-v2" is changed back to the worker's running image
    Then the phase becomes "Completed" within 2 minutes
    And the worker Deployment was seen at its new generation with the previous ReplicaSet's progress deadline
    And the API is neither written nor claimed while an old worker pod exists

  @real @recovery
  Scenario: a rollout that exceeded its progress deadline and then completes recovers the upgrade
    Given a worker Deployment with 1 replica, surge 1, unavailable 0, a progress deadline of 5s, pods ready after 15s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Failed" within 30 seconds
    And the message contains "progress deadline"
    And the phase becomes "Completed" within 2 minutes
    And the API is neither written nor claimed while an old worker pod exists
    And each Deployment image was written once

  @real @quota
  Scenario: a ResourceQuota refuses the worker's surge pod
    The quota admission refuses the new ReplicaSet's first pod; the
    ReplicaSet reports FailedCreate, the Deployment ReplicaFailure, and the
    upgrade fails at once with the API server's message, naming the quota.
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, a progress deadline of 60s, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And a ResourceQuota "worker-quota" allowing 3 pods
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Failed" within 20 seconds
    And the message contains "cannot create replicas (FailedCreate)"
    And the message contains "is forbidden: exceeded quota: worker-quota, requested: pods=1, used: pods=3, limited: pods=3"
    And the upgrade failed before the worker's progress deadline
    And the API image is not written

  @real @real-node @markers
  Scenario: the new worker image crash-loops
    The ":crashloop" marker: the simulator's kubelet and the kwok stages both
    run the container for 500ms, restart it at once, then back off 10s, 20s.
    On the real node the demo image's crashloop tag exits 1 after 500ms and
    the real kubelet restarts it with its own back-off.
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, a progress deadline of 120s, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:crashloop"
    Then the phase becomes "Failed" within 90 seconds
    And the message contains "CrashLoopBackOff after 3 restarts"
    And the upgrade failed before the worker's progress deadline
    And the API image is not written

  @real @markers
  Scenario: the new worker image never becomes ready
    The ":never-ready" marker: the pod runs and never passes readiness, so
    only the worker's progress deadline ends the rollout.
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, a progress deadline of 10s, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker image "registry.example.com/job-worker:never-ready"
    Then the phase becomes "Failed" within 60 seconds
    And the message contains "progress deadline"
    And the API image is not written
