Feature: A Deployment's status is trusted only once its generation is observed
  Right after the operator writes the worker's image, the Deployment's
  metadata.generation is one ahead of status.observedGeneration and every
  counter still describes the previous, finished rollout: it looks
  "complete". The operator waits until the Deployment controller has
  observed the new generation before it believes any of it.

  @real @C03 @mutants
  Scenario: C03 right after the worker is written its status still describes the previous rollout
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And the Deployment controller has published every rollout complete
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the worker Deployment was seen a generation ahead of its observedGeneration with complete counters
    And the upgrade was never past "WaitingForWorkers" while the worker's generation was not observed
    And the API is neither written nor claimed while an old worker pod exists

  @sim-only @C03 @mutants
  Scenario: C03 kube-controller-manager is slow to observe the new worker image
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 2s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    And kube-controller-manager observes every change 3 seconds late
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the operator read the worker Deployment a generation ahead of its observedGeneration
    And the upgrade was never past "WaitingForWorkers" while the worker's generation was not observed
    And the API is neither written nor claimed while an old worker pod exists
