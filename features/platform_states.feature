@platform
Feature: Platform upgrades: the failure states a real StarlingX shows, and what the operator does
  A failed step leaves USM's deploy in start-failed, host-failed or
  activate-failed and sysinv's kube upgrade in a *-failed state
  (software/states.py DEPLOY_STATES, deploy_state.py; sysinv
  common/kubernetes.py); the VIM raises its own alarm while it applies and
  after an apply failed, cleared only when the strategy is deleted
  (nfv-vim objects/_sw_update.py, fm-api 900.201/900.203/900.401/900.403).
  Builds fail on alarms the way the real checks do: a sw-deploy build in
  USM's deploy precheck (sysinv health with the precheck's ignore list;
  relaxed and permissive pass force), a kube-upgrade build on alarms
  outside the VIM's kube ignore list. A failed or timed-out apply is then
  aborted by the VIM itself (nfv_common strategy/_strategy.py
  Strategy.phase_complete → _abort): apply-failed → aborting → aborted,
  the failed alarm kept; on a simplex system that abort phase runs
  sysinv's kube-upgrade-abort. See docs/starlingx-conformance.md.

  Scenario: a host that fails to deploy leaves host-failed and the VIM's failed alarm; going back rolls the deploy back
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the next apply of a sw-deploy strategy fails at stage 1
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then within 2 hours the status is "Apply Failed" with a reason containing "the sw-deploy strategy is apply-failed (injected apply failure at stage 1 (sw-upgrade-controllers))"
    And the USM deploy is "host-failed"
    And the system has alarm "900.203" raised
    And the condition Stalled is True
    When 1 hour passes
    Then the system has alarm "900.203" raised
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0","kubernetes":"v1.33.0"}}}'
    Then within 1 hour the status is "None" with a reason containing "aborted; the system still runs starlingx-13.01.0 / v1.33.0, with no software deploy"
    And the software deploy went through "start → start-done → host → host-failed → host-rollback → host-rollback-done → deleted"
    And the system has no alarm "900.203"
    And USM holds no software deploy
    And the VIM holds no strategy
    And the condition Ready is True

  @http
  Scenario: activate fails: activate-failed, the strategy is kept; a new target rolls the deploy back first
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the next apply of a sw-deploy strategy fails at its "activate-upgrade" step
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    Then within 2 hours the status is "Apply Failed" with a reason containing "injected failure of activate-upgrade"
    And the USM deploy is "activate-failed"
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 3 hours
    And the operator created the strategies "sw-deploy(starlingx-13.01.2) → sw-deploy(rollback) → sw-deploy(starlingx-13.01.1)"
    And the software deploy went through "start → start-done → host → host-done → activate → activate-failed → activate-rollback-pending → activate-rollback → activate-rollback-done → host-rollback → host-rollback-done → deleted → start → start-done → host → host-done → activate → activate-done → completed → deleted"
    And the system runs "starlingx-13.01.1 / v1.33.0"

  @http
  Scenario: on a simplex system the VIM's own abort phase after a failed Kubernetes step restores the running version; a changed spec upgrades again
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the next apply of a kube-upgrade strategy fails at stage 6
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then within 2 hours the status is "Apply Failed" with a reason containing "the kube-upgrade strategy is apply-failed (injected apply failure at stage 6 (kube-upgrade-first-control-plane v1.34.1)), then aborted by the VIM's own abort phase"
    And the VIM holds a kube-upgrade strategy that is aborted
    And sysinv's kube upgrade is "upgrade-aborted"
    And the system runs "starlingx-13.01.0 / v1.33.0"
    And the system has alarm "900.403" raised
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"
    And sysinv's kube upgrade is "none"
    And the system has no alarm "900.403"

  Scenario: a Kubernetes step that fails leaves sysinv's *-failed state; the next strategy resumes at the failed step
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the next apply of a kube-upgrade strategy fails at stage 1
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then within 2 hours the status is "Apply Failed" with a reason containing "the kube-upgrade strategy is apply-failed"
    And sysinv's kube upgrade is "downloading-images-failed"
    And the system has alarm "900.403" raised
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"
    And sysinv's kube upgrade is "none"
    And the system has no alarm "900.403"

  @http
  Scenario: a strict sw-deploy build fails in the deploy precheck on an alarm it does not ignore; relaxed lets a minor alarm through
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the system has alarm "100.114" (not management-affecting)
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then within 2 hours the status is "Build Failed" with a reason containing "No alarms: [Fail] [1] alarms found, [0] of which are management affecting"
    And the events were DeployStarted, 3 DeployBuildRetry and DeployBuildFailed
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 2 hours
    And the system runs "starlingx-13.01.1 / v1.33.0"

  Scenario: alarms on the deploy precheck's ignore list do not stop a strict build
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the system has alarm "280.001" (management-affecting)
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 2 hours
    And the system received 1 strategy create

  Scenario: a kube-upgrade build fails on an alarm outside the VIM's kube ignore list, not on one inside it
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the system has alarm "200.001" (management-affecting)
    And the system has alarm "100.114" (not management-affecting)
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then within 2 hours the status is "Build Failed" with a reason containing "active alarms present [ 100.114 ]"
    When the user patches the system Upgrade with '{"spec":{"deployPolicy":{"alarmRestriction":"relaxed"}}}'
    Then the deployment completes within 3 hours

  @http
  Scenario: USM releases deployed-partial or with no state are listed, never taken for the running release
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And USM also lists the release "starlingx-13.01.5" in state "deployed-partial" requiring ""
    And USM also lists the release "starlingx-13.01.6" in state "" requiring ""
    And the upgrade operator is running
    Then the status shows release "starlingx-13.01.0 / v1.33.0", system mode "duplex", 7 uploaded product releases and 3 Kubernetes versions
    And the condition Ready is True
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2"}}}'
    Then the deployment completes within 2 hours
    And the system runs "starlingx-13.01.2 / v1.33.0"
