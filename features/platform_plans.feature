@platform
Feature: Platform upgrades: every row of the seed's plan table runs to completion
  The singleton Upgrade `system` declares the composite release the whole
  StarlingX system should run. On a spec change the operator plans from the
  live system (no stored execution plan) and drives one VIM strategy per
  step: create → ready-to-apply → apply → applied → delete → next step.

  The demo system has product releases starlingx-13.01.0 (deployed),
  13.01.1, 13.01.2, the major release 27.03.0 and its patch 27.03.1, and
  Kubernetes v1.32.2 … v1.35.0 (13.01 runs up to v1.34.1, 27.03 runs
  v1.34.1 and v1.35.0).

  Scenario Outline: <change> on a <mode> system
    Given a <mode> StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '<patch>'
    Then the deploy plan is "<plan>"
    And the deployment completes within 12 hours
    And the system runs "<end>"
    And the operator created the strategies "<plan>"
    And the deployment events were DeployStarted, <intermediate> DeployStepCompleted and DeployCompleted, in that order
    And the VIM holds no strategy
    And the condition Ready is True

    Examples:
      | change               | mode    | patch                                                                                 | plan                                                                                                                                  | end                         | intermediate |
      | patch only           | simplex | {"spec":{"release":{"platform":"starlingx-13.01.1"}}}                                 | sw-deploy(starlingx-13.01.1)                                                                                                          | starlingx-13.01.1 / v1.33.0 | 0            |
      | patch only           | duplex  | {"spec":{"release":{"platform":"starlingx-13.01.1"}}}                                 | sw-deploy(starlingx-13.01.1)                                                                                                          | starlingx-13.01.1 / v1.33.0 | 0            |
      | k8s only             | simplex | {"spec":{"release":{"kubernetes":"v1.34.1"}}}                                         | kube-upgrade(v1.34.1)                                                                                                                 | starlingx-13.01.0 / v1.34.1 | 0            |
      | k8s only             | duplex  | {"spec":{"release":{"kubernetes":"v1.34.1"}}}                                         | kube-upgrade(v1.34.1)                                                                                                                 | starlingx-13.01.0 / v1.34.1 | 0            |
      | patch + k8s          | simplex | {"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}          | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1)                                                                                  | starlingx-13.01.2 / v1.34.1 | 1            |
      | patch + k8s          | duplex  | {"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}          | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1)                                                                                  | starlingx-13.01.2 / v1.34.1 | 1            |
      | major upgrade to GA  | simplex | {"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}          | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → kube-upgrade(v1.35.0)                          | starlingx-27.03.0 / v1.35.0 | 3            |
      | major upgrade to GA  | duplex  | {"spec":{"release":{"platform":"starlingx-27.03.0","kubernetes":"v1.35.0"}}}          | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → kube-upgrade(v1.35.0)                          | starlingx-27.03.0 / v1.35.0 | 3            |
      | major upgrade to patch | simplex | {"spec":{"release":{"platform":"starlingx-27.03.1","kubernetes":"v1.35.0"}}}        | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → sw-deploy(starlingx-27.03.1) → kube-upgrade(v1.35.0) | starlingx-27.03.1 / v1.35.0 | 4       |

    @http
    Examples: the longest plan, also over HTTP (the swact goes through sysinv's PATCH /v1/ihosts)
      | change               | mode    | patch                                                                                 | plan                                                                                                                                  | end                         | intermediate |
      | major upgrade to patch | duplex  | {"spec":{"release":{"platform":"starlingx-27.03.1","kubernetes":"v1.35.0"}}}        | sw-deploy(starlingx-13.01.2) → kube-upgrade(v1.34.1) → sw-deploy(starlingx-27.03.0) → sw-deploy(starlingx-27.03.1) → kube-upgrade(v1.35.0) | starlingx-27.03.1 / v1.35.0 | 4       |

  Scenario: a duplex system goes up one Kubernetes minor version per step
    Given a duplex StarlingX system running "starlingx-13.01.0 / v1.32.2"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deploy plan is "kube-upgrade(v1.33.0) → kube-upgrade(v1.34.1)"
    And the deployment completes within 6 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"

  Scenario: a simplex system jumps Kubernetes minor versions in one strategy
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.32.2"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"kubernetes":"v1.34.1"}}}'
    Then the deploy plan is "kube-upgrade(v1.34.1)"
    And the deployment completes within 6 hours
    And the system runs "starlingx-13.01.0 / v1.34.1"

  Scenario: a target older than the running release is refused by the plan, not executed
    Given a simplex StarlingX system running "starlingx-13.01.1 / v1.33.0"
    And the upgrade operator is running
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.0"}}}'
    And 10 minutes pass
    Then the status is "Failed" with a reason containing "product release 'starlingx-13.01.0' is older than the running 'starlingx-13.01.1'; a plan only moves forward"
    And the condition Stalled is True
    And the system received 0 strategy creates
