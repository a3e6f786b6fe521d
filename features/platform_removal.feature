@platform
Feature: Patch removal as a real StarlingX does it
  USM removes the patches of the running major when an older release of
  that major is deployed (starlingx/update software_controller.py
  _validate_releases_for_select, software_deploy_start_api's remove
  branch: the newer patches become removing, the deploy runs from the
  running release to the older one). It cannot be aborted ("Abort
  operation is not supported in patch removal") nor deleted before it
  completes ("Delete is not supported while removing a release"), and the
  VIM's rollback strategy needs a deploying release. The operator's plans
  only move forward; a removal someone left on the system is never rolled
  back: the operator waits and says how to finish it, then plans from the
  live system. See docs/starlingx-conformance.md.

  @http
  Scenario: a patch removal left on the system is never rolled back; the operator says how to finish it, then plans from the live system
    Given a duplex StarlingX system running "starlingx-13.01.2 / v1.33.0"
    And the upgrade operator is running
    When the administrator deploys "starlingx-13.01.1" on the system with a sw-deploy strategy and deletes it after its first stage
    Then the USM deploy is "start-done"
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1","kubernetes":"v1.34.1"}}}'
    And 30 minutes pass
    Then the condition Ready says "is a patch removal: USM neither aborts it nor deletes it before it completes"
    And the condition Ready says "sw-manager sw-deploy-strategy create starlingx-13.01.1 --delete"
    And the system received 0 strategy creates
    And the USM deploy is "start-done"
    When the administrator deploys "starlingx-13.01.1" on the system with a sw-deploy strategy
    Then the deployment completes within 3 hours
    And the system runs "starlingx-13.01.1 / v1.34.1"
    And the system received 1 strategy create
    And USM holds no software deploy
