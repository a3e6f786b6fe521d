@platform
Feature: Platform upgrades: abort reverts to deployFromRelease
  Setting spec.release back to status.activeDeploy.deployFromRelease
  aborts the running step and reverts it with what a real StarlingX has:
  the VIM's abort stops the step's strategy after its running step
  (nfv_common strategy _abort); a sw-upgrade strategy created with
  "rollback": true then runs USM's deploy abort, activate-rollback, host
  rollback and deploy delete (nfv SwUpgradeStrategy._build_complete_rollback;
  starlingx/update software_controller.py software_deploy_abort_api and
  friends). The VIM refuses to abort a controller's stage and any
  kube-upgrade on a duplex system; steps already completed (their deploy
  deleted, Kubernetes upgraded) are past the point of no return, and the
  status says so. See docs/starlingx-conformance.md.

  @http
  Scenario: abort while the step's strategy is building: it is deleted, nothing was deployed
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    And step 1 is building
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0, with no software deploy"
    And the VIM holds no strategy
    And USM holds no software deploy
    And the software deploy went through ""
    And the operator created the strategies "sw-deploy(starlingx-13.01.2)"
    And the condition Ready is True

  @http
  Scenario: abort while the deploy starts: the started deploy is rolled back and deleted
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    And the USM deploy is "start"
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0, with no software deploy"
    And the operator aborted the sw-deploy strategy and then deleted it
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → sw-deploy(rollback)"
    And an event "DeployRollback" says "rolling back the software deploy 13.01.0 → 13.01.2 (start-done)"
    And the software deploy went through "start → start-done → deleted"
    And USM holds no software deploy
    And the VIM holds no strategy
    And the system runs "starlingx-13.01.0 / v1.33.0"

  Scenario: abort after a host was upgraded: the VIM refuses while controllers upgrade, then every upgraded host is rolled back
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    And host controller-1 runs "starlingx-13.01.2"
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 2 hours the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0"
    And an event "DeployAbortRefused" says "Abort rejected: cannot abort during sw-upgrade-controllers stage."
    And the software deploy went through "start → start-done → host → host-rollback → host-rollback-done → deleted"
    And every host runs "starlingx-13.01.0"
    And USM holds no software deploy
    And the VIM holds no strategy

  @http
  Scenario: abort on a simplex system after its host was upgraded
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    And host controller-0 runs "starlingx-13.01.1"
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0"
    And the software deploy went through "start → start-done → host → host-done → host-rollback → host-rollback-done → deleted"
    And every host runs "starlingx-13.01.0"
    And USM holds no software deploy

  Scenario: abort after activate: activate-rollback, then the hosts, then delete
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    And the USM deploy is "activate-done"
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 2 hours the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0"
    And the software deploy went through "start → start-done → host → host-done → activate → activate-done → completed → activate-rollback-pending → activate-rollback → activate-rollback-done → host-rollback → host-rollback-done → deleted"
    And every host runs "starlingx-13.01.0"
    And USM holds no software deploy
    And the VIM holds no strategy

  Scenario: abort a Kubernetes step on a simplex system: sysinv's kube-upgrade-abort restores the version
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    And 15 minutes pass
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0"
    And the operator aborted the kube-upgrade strategy and then deleted it
    And sysinv's kube upgrade is "upgrade-aborted"
    And the condition Ready is True
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"
    And sysinv's kube upgrade is "none"

  Scenario: a Kubernetes step on a duplex system cannot be aborted: it runs to its end, and the status says what to do
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    And step 1 is applying
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 3 hours the status is "Failed" with a reason containing "aborted after 1 of 1 step(s); the system runs starlingx-13.01.0 / v1.34.1, not starlingx-13.01.0 / v1.33.0: kubernetes is never downgraded"
    And the condition Stalled is True
    And no event "DeployAbortRefused" was emitted
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1","kubernetes":"v1.34.1"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.1 / v1.34.1"

  Scenario: abort a major upgrade during its major step: that step is rolled back, the completed steps stay
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}'
    And host controller-1 runs "starlingx-27.03.0"
    And the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 6 hours the status is "Failed" with a reason containing "aborted after 2 of 4 step(s); the system runs starlingx-13.01.2 / v1.34.1, not starlingx-13.01.0 / v1.33.0: a software deploy that was completed and deleted cannot be aborted"
    And every host runs "starlingx-13.01.2"
    And USM holds no software deploy
    And the VIM holds no strategy
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → sw-deploy(rollback)"
