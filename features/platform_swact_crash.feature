@platform
Feature: Platform upgrades: swact before a duplex major, operator crashes
  A duplex system deploys a major release from controller-0: the operator
  swacts first (SwactInitiated). A crash of the operator at any point
  never creates a second strategy: a restarted operator finds the VIM's
  strategy by listing and resumes it.

  Background:
    Given a duplex StarlingX system running "starlingx-13.01.2 / v1.34.1"

  Scenario: duplex major upgrade with controller-1 active swacts to controller-0 first
    Given controller-1 is the active controller
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0"}}}'
    Then the deploy plan is "sw-deploy(starlingx-27.03.0)"
    And the deployment completes within 6 hours
    And an event "SwactInitiated" says "Swact from controller-1 to controller-0 before the major upgrade step 1/1 sw-deploy(starlingx-27.03.0)"
    And the operator swacted controller-1 before it created the strategy of step 1
    And the system runs "starlingx-27.03.0 / v1.34.1"

  Scenario: duplex major upgrade with controller-0 active needs no swact
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0"}}}'
    Then the deployment completes within 6 hours
    And no event "SwactInitiated" was emitted
    And the system runs "starlingx-27.03.0 / v1.34.1"

  Scenario Outline: the operator crashes right after it <action> the strategy of step <step>
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the operator will crash right after it <action> the strategy of step <step> and restart 3 minutes later
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}'
    Then the deployment completes within 12 hours
    And the operator crashed 1 time
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → kube-upgrade(v1.35.0)"
    And the deployment events were DeployStarted, 3 DeployStepCompleted and DeployCompleted, in that order
    And the system runs "starlingx-27.03.0 / v1.35.0"

    Examples:
      | action  | step |
      | creates | 1    |
      | applies | 1    |
      | deletes | 1    |
      | creates | 2    |
      | applies | 2    |
      | deletes | 2    |
      | swacts  | 3    |
      | creates | 3    |
      | applies | 3    |
      | deletes | 3    |
      | creates | 4    |
      | applies | 4    |
      | deletes | 4    |

  Scenario Outline: the operator crashes while step <step> is <state>
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}'
    And step <step> is <state>
    And the operator crashes and restarts 10 minutes later
    Then the deployment completes within 12 hours
    And after the restart the operator kept monitoring the same strategy until it was applied and deleted
    And the system received 4 strategy creates
    And the system runs "starlingx-27.03.0 / v1.35.0"

    Examples:
      | step | state    |
      | 1    | building |
      | 1    | applying |
      | 2    | applying |
      | 3    | building |
      | 3    | applying |
      | 4    | applying |
