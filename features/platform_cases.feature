@platform
Feature: Platform upgrade cases from public bug reports (C15–C18)

  Background:
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"

  @http
  Scenario: C15 a strategy build fails once with build-failed, then succeeds
    Given the next 1 strategy build fails
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.2 / v1.33.0"
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → sw-deploy(starlingx-13.01.2)"
    And the system received 2 strategy creates
    And an event "DeployBuildRetry" says "build ended build-failed (injected build failure); deleting it and creating it again (retry 1 of 3)"
    And the status was never "Build Failed", "Apply Failed" or "Failed"

  @http
  Scenario: C16 the VIM answers 503 on 3 consecutive polls during apply
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    And step 1 is applying
    And the VIM answers 503 to every request for the next 3 polls
    Then the deployment completes within 3 hours
    And the operator saw the VIM unavailable at least 3 times
    And the system received 1 strategy create
    And the status was never "Build Failed", "Apply Failed" or "Failed"
    And the condition Stalled was never True
    And the condition Ready was Unknown with reason "VIMUnavailable" during the outage

  Scenario: C16 the VIM does not answer 3 consecutive polls in time during apply
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    And step 1 is applying
    And the VIM does not answer any request in time for the next 3 polls
    Then the deployment completes within 3 hours
    And the operator saw the VIM unavailable at least 3 times
    And the system received 1 strategy create
    And the status was never "Build Failed", "Apply Failed" or "Failed"
    And the condition Stalled was never True
    And the condition Ready was Unknown with reason "VIMUnavailable" during the outage

  @http
  Scenario: C17 the operator is restarted while a strategy is applying
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}'
    And step 2 is applying
    And the operator crashes and restarts 5 minutes later
    Then the deployment completes within 6 hours
    And after the restart the operator kept monitoring the same strategy until it was applied and deleted
    And the system received 2 strategy creates
    And the system runs "starlingx-13.01.2 / v1.34.1"

  Scenario: C18 a major upgrade from a patch release with a newer Kubernetes available
    Given a simplex StarlingX system running "starlingx-13.01.1 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}'
    Then the deploy plan is:
      | type         | target            |
      | sw-deploy    | starlingx-13.01.2 |
      | kube-upgrade | v1.34.1           |
      | sw-deploy    | starlingx-27.03.0 |
      | kube-upgrade | v1.35.0           |
    And the deployment completes within 12 hours
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → kube-upgrade(v1.35.0)"
    And the system runs "starlingx-27.03.0 / v1.35.0"
