@platform
Feature: Platform upgrades: abort, build and apply failures
  Setting spec.release back to status.activeDeploy.deployFromRelease
  aborts a deployment; a failed build is retried (bounded, with an event
  each); a failed apply stops the deployment, keeps the strategy for
  inspection and starts again once the spec changes.

  Background:
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"

  Scenario: abort a patch mid-apply by setting spec.release back to deployFromRelease
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    And step 1 is applying
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0"
    And the operator aborted the sw-deploy strategy and then deleted it
    And the VIM holds no strategy
    And an event "DeployAborted" says "Deployment to starlingx-13.01.2 / v1.33.0 aborted"
    And the system runs "starlingx-13.01.0 / v1.33.0"

  Scenario: while a deployment runs spec.release may only go back to deployFromRelease
    Given the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    And step 1 is applying
    And the user tries to patch the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    Then the patch is refused with "A deployment to 'starlingx-13.01.1 / v1.33.0' is in progress; spec.release cannot change until it ends, except back to 'starlingx-13.01.0 / v1.33.0' (platform and kubernetes) to abort it"
    And the deployment completes within 2 hours
    And the system runs "starlingx-13.01.1 / v1.33.0"

  Scenario: a build that times out every time is retried three times, then reported
    Given the next 4 strategy builds time out
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then within 2 hours the status is "Build Failed" with a reason containing "build ended build-timeout 4 times"
    And the condition Stalled is True
    And the events were DeployStarted, 3 DeployBuildRetry and DeployBuildFailed
    And the system received 4 strategy creates
    And the VIM holds a sw-upgrade strategy that is build-timeout
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 2 hours
    And the system received 5 strategy creates
    And the system runs "starlingx-13.01.1 / v1.33.0"

  Scenario: a build that times out once is retried and the step completes
    Given the next 1 strategy build times out
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 3 hours
    And an event "DeployBuildRetry" says "build ended build-timeout"
    And the system received 2 strategy creates
    And the system runs "starlingx-13.01.0 / v1.34.1"

  Scenario: an apply fails, the strategy is kept, a corrected spec deploys
    Given the next apply of a sw-deploy strategy fails at stage 0
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    Then within 2 hours the status is "Apply Failed" with a reason containing "the sw-deploy strategy is apply-failed (injected apply failure at stage 0 (sw-upgrade-start)), then aborted by the VIM's own abort phase"
    And the condition Stalled is True
    And an event "DeployApplyFailed" says "step 1/1 sw-deploy(starlingx-13.01.2)"
    And the VIM holds a sw-upgrade strategy that is aborted
    And the system has alarm "900.203" raised
    When 2 hours pass
    Then the system received 1 strategy create
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 2 hours
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → sw-deploy(rollback) → sw-deploy(starlingx-13.01.1)"
    And an event "DeployRollback" says "rolling back the software deploy 13.01.0 → 13.01.2 (start-failed)"
    And the system runs "starlingx-13.01.1 / v1.33.0"
    And USM holds no software deploy

  Scenario: an apply that times out stops the deployment until the spec changes
    Given the next apply of a kube-upgrade strategy times out at stage 2
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then within 3 hours the status is "Apply Failed" with a reason containing "the kube-upgrade strategy is apply-timeout (Step (kube-pre-application-update) timed out"
    And the status is "Apply Failed" with a reason containing "), then aborted by the VIM's own abort phase"
    And the VIM holds a kube-upgrade strategy that is aborted
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"
    And the system received 2 strategy creates
