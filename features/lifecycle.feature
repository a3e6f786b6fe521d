Feature: An upgrade moves through its phases in order, once
  Pending → UpgradingWorkers → WaitingForWorkers → UpgradingAPI →
  WaitingForAPI → Completed, one transition per reconcile, each image
  written once. A finished upgrade stays finished, also across operator
  restarts. Two upgrades of the same Deployments never fight: the newer one
  is held until the older one is finished.

  @real
  Scenario: an upgrade goes through every phase in order
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 3s and terminating in 8s
    And an API Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 3s and terminating in 8s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    Then the phase becomes "Completed" within 5 minutes
    And the phases were "Pending, UpgradingWorkers, WaitingForWorkers, UpgradingAPI, WaitingForAPI, Completed"
    And the status shows the worker image "job-worker:v2.0.0" and the API image "job-api:v2.0.0"
    And the worker image is written once
    And the API image is written once

  @real
  Scenario: a completed upgrade is not written again after the operator restarts
    Given a worker Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "Completed" within 5 minutes
    And the operator restarts
    Then the phase stays "Completed" for 10 seconds
    And each Deployment image was written once

  @real @C14
  Scenario: C14 two upgrades of the same Deployments with different images
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 2s and terminating in 2s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the upgrade "upgrade-v3" is applied with the worker image "registry.example.com/job-worker:v3.0.0" and the API image "registry.example.com/job-api:v3.0.0"
    Then the upgrade "upgrade-v3" is refused or held with a message naming "upgrade-v2" within 30 seconds
    And the phase of "upgrade-v2" becomes "Completed" within 5 minutes
    When "upgrade-v3" is applied again if it was refused
    Then the phase of "upgrade-v3" becomes "Completed" within 5 minutes
    And "upgrade-v3" wrote no image before "upgrade-v2" was "Completed"
    And each Deployment image was written once
