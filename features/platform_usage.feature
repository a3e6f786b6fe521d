@platform
Feature: Platform upgrades: the seed's usage examples
  The `kubectl patch upgrade system --type merge` commands of the seed's
  usage section behave as the seed describes. Merge patches keep what they
  do not name: after the bootstrap spec.release.kubernetes is the running
  version, so the seed's major example (which names only the platform)
  needs a Kubernetes version the new release runs, as after its k8s
  example.

  Background:
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running

  Scenario: the system Upgrade is bootstrapped from the live system
    Then the system Upgrade has spec.release "starlingx-13.01.0 / v1.33.0"
    And the status shows release "starlingx-13.01.0 / v1.33.0", system mode "duplex", 5 uploaded product releases and 3 Kubernetes versions
    And the condition Ready is True
    And the VIM holds no strategy

  Scenario: deploy a patch, Kubernetes, both, a dry run of the major release, then the major release
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 2 hours
    And the system runs "starlingx-13.01.1 / v1.33.0"
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.1 / v1.34.1"
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}'
    Then the deploy plan is "sw-deploy(starlingx-13.01.2)"
    And the deployment completes within 2 hours
    And the system runs "starlingx-13.01.2 / v1.34.1"
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0"},"deployPolicy":{"dryRun":true}}}'
    And 2 hours pass
    Then the deploy plan is "sw-deploy(starlingx-27.03.0)"
    And status.deployPlan says dryRun true, validationResult "OK", from "starlingx-13.01.2 / v1.34.1" to "starlingx-27.03.0 / v1.34.1"
    And the system received 3 strategy creates
    And the system runs "starlingx-13.01.2 / v1.34.1"
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"dryRun":false}}}'
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0"}}}'
    Then the deployment completes within 4 hours
    And the system runs "starlingx-27.03.0 / v1.34.1"
    And the operator created the strategies "sw-deploy(starlingx-13.01.1) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-13.01.2) → sw-deploy(starlingx-27.03.0)"

  # USM's release records name no Kubernetes versions; only the deploy
  # precheck reads 27.03's from its feed (deploy-precheck _check_kube_version).
  Scenario: the major example from Kubernetes v1.33.0: only the deploy precheck can tell 27.03 does not run v1.33.0
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0"},"deployPolicy":{"dryRun":true}}}'
    Then the deploy plan is "sw-deploy(starlingx-13.01.2) → sw-deploy(starlingx-27.03.0)"
    And step 2 of the deploy plan is checked "checked at precheck: the USM deploy precheck refuses 'starlingx-27.03.0' unless its feed includes the active Kubernetes v1.33.0"
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"dryRun":false}}}'
    Then within 6 hours the status is "Build Failed" with a reason containing "Upgrade active kubernetes version [v1.33.0] to one of the supported versions [v1.34.1, v1.35.0]"
    And the system runs "starlingx-13.01.2 / v1.33.0"
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 6 hours
    And the system runs "starlingx-27.03.0 / v1.34.1"

  Scenario: the abort example during a deployment from starlingx-13.01.0 / v1.33.0
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}'
    And step 1 is applying
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted"
    And the VIM holds no strategy
    And USM holds no software deploy
    And the system received 2 strategy creates

  Scenario: the status shows live progress while a step runs
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    And step 1 is applying
    And 20 minutes pass
    Then the status shows "Deploying" from "starlingx-13.01.0 / v1.33.0" to "starlingx-13.01.0 / v1.34.1", deploying "k8s-v1.34.1"
    And status.activeDeploy.releaseDeployingStatus looks like "apply(N%)/stg:(N/N) kube-upgrade-…"
    And status.activeDeploy.timeDuration looks like "mm:ss"
    And the condition Progressing is True

  Scenario: dry run with a target two steps away executes nothing
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"},"deployPolicy":{"dryRun":true}}}'
    And 1 hour passes
    Then the deploy plan is "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1)"
    And the system received 0 strategy creates
    And the condition Ready is False
    And the condition Progressing is False

  Scenario: targetDeployStep pre-upgrade-deploy stops before the major release
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"},"targetDeployStep":"pre-upgrade-deploy"}}'
    Then within 5 hours the status is "None" with a reason containing "stopped before sw-deploy(starlingx-27.03.0): spec.targetDeployStep is pre-upgrade-deploy"
    And the system runs "starlingx-13.01.2 / v1.34.1"
    And an event "DeployStopped" says "set it to None to continue to starlingx-27.03.0 / v1.35.0"
    When the user patches the system Upgrade with '{"spec":{"targetDeployStep":"None"}}'
    Then the deployment completes within 5 hours
    And the system runs "starlingx-27.03.0 / v1.35.0"

  Scenario: the webhook refuses a release that is not uploaded
    When the user tries to patch the system Upgrade with '{"spec":{"release":{"platform":"starlingx-99.99.0"}}}'
    Then the patch is refused with "Product release 'starlingx-99.99.0' is not uploaded"
