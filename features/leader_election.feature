@election
Feature: A frozen leader loses its lease to the standby replica
  Two operator replicas run under leader election on one Lease. The leader
  is frozen (its network and its timers stall: on a real cluster the
  process is stopped with SIGSTOP, then continued) for longer than the
  lease lasts; the standby takes the lease and finishes the upgrade, and
  the old leader, once it runs again, finds its lease lost, exits, and is
  restarted as the kubelet restarts a container. No write may come from a
  replica that does not hold the lease.

  A frozen process does not see its renew deadline pass: once continued,
  controller-runtime's manager still runs its controllers until client-go's
  renew loop gives up, a renew deadline (10 s) later. On the real control
  plane such a resumed leader wrote the API image while the standby held
  the lease (the second scenario, a 30 s freeze of a 40 s worker rollout:
  3 runs of 5), until the operator checked its last renewal of the Lease
  before every write (manager.LeaseGuard): a renewal older than the renew
  deadline stops the pass. The first scenario's freeze outlasts the whole
  upgrade; the second's ends while the standby rolls out. Leader election
  is still not fencing: a pause between the check and the write is not
  caught.

  @real @process @C10
  Scenario: C10 the leader process is frozen past its lease during the worker rollout
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s and terminating in 10s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    And a second operator replica is on standby under leader election
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the leader's network stalls for 60 seconds
    Then the phase becomes "Completed" within 10 minutes
    And the standby replica took over and wrote
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists
    And the frozen leader exited once it ran again and was restarted within 90 seconds
    And every write the replicas' records attribute came from the replica holding the lease

  @real @process @C10
  Scenario: C10 the leader process is frozen past its lease and resumes while the standby rolls out
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s and terminating in 20s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    And a second operator replica is on standby under leader election
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the leader's network stalls for 30 seconds
    Then the phase becomes "Completed" within 10 minutes
    And the standby replica took over and wrote
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists
    And the frozen leader exited once it ran again and was restarted within 90 seconds
    And every write the replicas' records attribute came from the replica holding the lease

  @sim-only @C10
  Scenario: C10 the leader process is paused past its lease and resumes while the standby rolls out (simulator)
    The simulator models the pause itself (the fault pause: the leader runs
    nothing — no reconcile, no renewal, no timer — then resumes with its
    memory as it was, its elector leading on until its renew poll's
    deadline, 10 s after the resume, as client-go's does); its replicas
    check their last renewal before writing with the guard's own decision
    (manager.RenewalHeld). Without that check the resumed leader writes
    while the standby holds the lease (the mutant no-lease-guard,
    scenarios/faults).

    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 5s and terminating in 20s
    And an API Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 5s
    And the Deployments are rolled out
    And a second operator replica is on standby under leader election
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the leader's process is paused for 30 seconds
    Then the phase becomes "Completed" within 10 minutes
    And the standby replica took over and wrote
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists
    And the frozen leader exited once it ran again and was restarted within 90 seconds
    And every write the replicas' records attribute came from the replica holding the lease
