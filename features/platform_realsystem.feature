@platform
Feature: Platform upgrades against what a real StarlingX exposes
  USM's release records name no Kubernetes versions (release_data.py
  to_query_dict); sysinv's kube_versions list the running release's
  versions only (kubernetes.py get_kube_versions). The plan uses exactly
  that: what only a later point can tell is a step's check. USM ids are
  <component>-MM.mm[.pp] (utils.py get_component_and_versions). The VIM
  takes kube-upgrade strategies with serial controllers only
  (KubeUpgradeStrategyAPI.post). All-in-one controllers have the worker
  personality, so a sw-upgrade build gives them worker stages and never
  reads the controller apply type; a Standard system's controllers refuse
  a parallel one (_strategy.py SwUpgradeStrategy._add_upgrade_hosts_stages,
  UpdateControllerHostsMixin). See docs/starlingx-conformance.md.

  @http
  Scenario: a kube-upgrade step is created with serial controllers whatever the policy says for sw-deploy
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"controllerApplyType":"parallel"},"release":{"kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 6 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"
    And the system received 1 strategy create

  @http
  Scenario: releases of another component and unusable requires entries are skipped with a warning, and the plan still runs
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And USM also lists the release "pxeboot-13.01.1" in state "available" requiring ""
    And USM also lists the release "starlingx-13.01.3" in state "available" requiring "starlingx-13.01.2,firmware-2.0"
    And the upgrade operator is running
    Then an event "ReleasesSkipped" says "pxeboot-13.01.1"
    And an event "ReleasesSkipped" says "firmware-2.0"
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.1 / v1.33.0"

  @http
  Scenario: the plan of a major upgrade says what only the deploy precheck and the new release can tell
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.1","kubernetes":"v1.35.0"},"deployPolicy":{"dryRun":true}}}'
    Then the deploy plan is "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → sw-deploy(starlingx-27.03.1) → kube-upgrade(v1.35.0)"
    And step 3 of the deploy plan is checked "checked at precheck: the USM deploy precheck refuses 'starlingx-27.03.0' unless its feed includes the active Kubernetes v1.34.1"
    And step 5 of the deploy plan is checked "checked when the step starts: sysinv lists the Kubernetes versions of the release it runs"

  @http
  Scenario: on an All-in-one duplex system a parallel controller apply type takes the worker path and deploys
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the system is All-in-one with 0 workers
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"controllerApplyType":"parallel"},"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.1 / v1.33.0"
    And the system received 1 strategy create

  Scenario: on a Standard system the VIM refuses a parallel controller apply type at build
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the system is Standard with 2 workers
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"controllerApplyType":"parallel"},"release":{"platform":"starlingx-13.01.1"}}}'
    Then within 2 hours the status is "Build Failed" with a reason containing "parallel apply type not allowed for controllers"
    And the system runs "starlingx-13.01.0 / v1.33.0"
