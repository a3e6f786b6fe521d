@platform
Feature: Platform upgrades: VIM outages (503 storms)
  While the StarlingX APIs answer 503 the operator keeps the recorded
  deployment as it is (never a false Failed), says so in its conditions
  (Ready Unknown, reason VIMUnavailable), polls again at its normal
  interval and resumes when the APIs answer; it never acts on a partial
  observation, so it creates no second strategy.

  Background:
    Given a simplex StarlingX system running "starlingx-13.01.0 / v1.33.0"
    And the upgrade operator is running

  @http
  Scenario Outline: a 503 storm of <minutes> minutes while step <step> is <state>
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.2","kubernetes":"v1.34.1"}}}'
    And step <step> is <state>
    And the VIM answers 503 to every request for <minutes> minutes
    Then the deployment completes within 8 hours
    And the system received 2 strategy creates
    And the status was never "Build Failed", "Apply Failed" or "Failed"
    And the condition Stalled was never True
    And the system runs "starlingx-13.01.2 / v1.34.1"

    Examples:
      | step | state    | minutes |
      | 1    | building | 5       |
      | 1    | applying | 30      |
      | 2    | building | 2       |
      | 2    | applying | 90      |

  Scenario: an outage right when the operator creates a strategy
    Given the VIM answers 503 to the next strategy create
    When the user patches the system Upgrade with '{"spec":{"release":{"platform":"starlingx-13.01.1"}}}'
    Then the deployment completes within 2 hours
    And the system received 1 strategy create
    And the operator saw the VIM unavailable at least 1 time

  Scenario: a 503 storm while the system is idle leaves it Ready afterwards
    When the VIM answers 503 to every request for 20 minutes
    And 30 minutes pass
    Then the condition Ready is True
    And the status was never "Build Failed", "Apply Failed" or "Failed"
