Feature: The API is upgraded only after every old worker pod is gone
  The worker (callee) is upgraded first. Its new pods being up is not enough:
  an old worker pod keeps serving requests while it terminates, and the
  Deployment's counters stop counting it the moment it starts terminating.
  So the operator writes the API (caller) image only once every old worker
  pod object is deleted — and then at once, without a polling gap.

  Pod timings are what kwok's stages (real cluster) and the simulator's
  kubelet both read: "pods ready after 5s" is the time from a pod's start to
  Ready, "terminating in 20s" the time an old pod keeps running after it was
  asked to stop (never longer than its grace period).

  @real @real-node @C01 @mutants
  Scenario: C01 a single old worker pod uses its whole grace period
    Given a worker Deployment with 1 replica, pods ready after 2s, a grace period of 60s and terminating in 60s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the API is neither written nor claimed while an old worker pod exists
    And the API image is written within 2 seconds after the last old worker pod is deleted
    And the worker's counters said 1 replica, 1 updated, 1 available for at least 50 seconds while an old worker pod still existed

  @real @real-node @C02 @mutants
  Scenario: C02 a rolling update with surge leaves old pods terminating after the counters say done
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s, a grace period of 20s and terminating in 20s
    And an API Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s, a grace period of 20s and terminating in 20s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the API is neither written nor claimed while an old worker pod exists or terminates
    And the API image is written within 2 seconds after the last old worker pod is deleted
    And the upgrade took at most 3 seconds longer than the worker's rollout plus the API's rollout

  @real @real-node @C04 @mutants
  Scenario: C04 one new worker pod up while the old ones still serve is not a finished rollout
    With surge 0 and unavailable 1 the real Deployment controller publishes
    3 replicas, 1 updated, 3 available in every run: the sync woken by the
    new pod's availability scales the old ReplicaSet down and computes the
    status from the ReplicaSets' statuses as they were (rolloutRolling →
    reconcileOldReplicaSets → syncRolloutStatus, kubernetes
    pkg/controller/deployment/rolling.go). With surge 1 that status exists
    only when the old ReplicaSet's status write wins a race with the new
    one's, which a real node lost.
    Given a worker Deployment with 3 replicas, surge 0, unavailable 1, pods ready after 3s and terminating in 6s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the worker's status showed 3 replicas, 1 updated and 3 available
    And while the worker's status showed 3 replicas, 1 updated and 3 available, the upgrade was "WaitingForWorkers" and the API image was not written
    And the API is neither written nor claimed while an old worker pod exists

  @real @real-node @sidecar @mutants
  Scenario: a worker whose first container is a sidecar
    Its pods list the proxy first and the worker second; old and new pods
    run the same proxy image. Which pods are old is told by their
    pod-template-hash, not by one container's image.
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, containers "proxy" and "worker", pods ready after 2s, a grace period of 10s and terminating in 6s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied with the worker container "worker"
    Then the phase becomes "Completed" within 5 minutes
    And the API is neither written nor claimed while an old worker pod exists or terminates
    And the API image is written within 2 seconds after the last old worker pod is deleted
    And each Deployment image was written once

  @real @C05
  Scenario: C05 a worker with the Recreate strategy
    Given a worker Deployment with 2 replicas, the Recreate strategy, pods ready after 2s and terminating in 5s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And no new worker pod was created while an old worker pod existed
    And the API image is written only after every new worker pod was ready
    And the API is neither written nor claimed while an old worker pod exists

  @real @C13
  Scenario: C13 the worker already runs the target image
    Given a worker Deployment with 2 replicas, the image "registry.example.com/job-worker:v2.0.0", pods ready after 2s and terminating in 2s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the worker image is never written
    And the API image is written once
    And the phases were "Pending, UpgradingWorkers, WaitingForWorkers, UpgradingAPI, WaitingForAPI, Completed"
