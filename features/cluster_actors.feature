@actors
Feature: Someone else acts on the cluster while the operator upgrades
  Other writers touch the objects the operator drives: a GitOps tool puts
  Git's image back, a CD pipeline pushes a newer release into the upgrade,
  an autoscaler or a person scales a Deployment, a node is lost. These are
  the cluster actors of the fault catalog (docs/faults.md), the same code
  as make simulate --faults: on the simulator in virtual time, on the local
  control plane with clients of their own and real timers. The operator
  never reports Completed while a Deployment runs another image than the
  target, and never writes the API while an old worker pod exists.

  @real
  Scenario: a GitOps tool reverts the worker's image mid-rollout until Git is fixed
    Flux's kustomize-controller server-side applies Git's manifest with force
    every 5 seconds; for 30 seconds Git still names the worker's previous
    image, then Git carries the target and the tool stops. The operator
    reports the worker Reverted, does not fight the tool, and completes only
    once the worker runs the target image again (the fault's own check: no
    Completed while the worker runs the reverted image). Out of process, the
    operator's writes are read from the event log, which tells Git's fixed
    image, owned by kustomize-controller after its write, from the
    operator's (the image's field managers: eventlog.Event.ImageOwner).
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "gitops-revert@0s:every=5s:for=30s" is injected
    Then the component "worker" becomes "Reverted" within 20 seconds
    And the message contains "reverted by kustomize-controller to registry.example.com/job-worker:v1.0.0"
    And the API image is not written
    And the phase becomes "Completed" within 3 minutes
    And the worker image is written once
    And the API image is written once
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: a newer release is pushed into the upgrade while the worker rolls out
    The CD pipeline changes the upgrade's images to v3.0.0 with kubectl while
    the worker rolls out to v2.0.0: the operator follows the new targets, and
    the API still waits for every old worker pod of either earlier image.
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "respec@0s" is injected
    Then a fault's note matches "^upgrade [a-z0-9-]+/upgrade-v2 now targets worker=registry.example.com/job-worker:v3.0.0, api=registry.example.com/job-api:v3.0.0$" within 1 seconds
    And the phase becomes "Completed" within 3 minutes
    And the status shows the worker image "job-worker:v3.0.0" and the API image "job-api:v3.0.0"
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: an autoscaler scales the worker up while it rolls out
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And a pod of the worker's new template is bound to a node and counted in its status within 30 seconds
    And the fault "scale@0s:replicas=5" is injected
    Then a fault's note matches "^component worker \(deployment [a-z0-9-]+/job-worker\) scaled to 5$" within 1 seconds
    And the phase becomes "Completed" within 3 minutes
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: the worker's node is lost while the worker rolls out
    Every pod bound to the node is force-deleted, oldest first, as the pod
    garbage collector does when a lost node is removed; the ReplicaSets
    create them again. One pod every 100 ms, so that each replacement is
    created before the next deletion on both backends (on the local control
    plane that order is a race when the deletes come back to back).
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And a pod of the worker's new template is bound to a node and counted in its status within 30 seconds
    And the fault "node-lost@0s:gap=100ms" is injected
    Then a fault's note matches "^node kwok-node-0 lost: [1-9][0-9]* pods deleted$" within 1 seconds
    And the phase becomes "Completed" within 3 minutes
    And each Deployment image was written once
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: the upgrade is deleted mid-rollout and applied again
    kubectl deletes the upgrade while the worker rolls out and the same
    manifest is applied again 5 seconds later: the new upgrade finds the
    worker where the old one left it and finishes the job.
    Given a worker Deployment with 3 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the fault "delete@0s:recreate=5s" is injected
    Then a fault's note matches "^the upgrade was deleted; it is applied again in 5s$" within 1 seconds
    And the phase becomes "Completed" within 3 minutes
    And the API is neither written nor claimed while an old worker pod exists

  @real
  Scenario: the validating webhook is down when the upgrade is deleted and applied again
    The re-apply is refused while the webhook is unreachable (failurePolicy
    Fail), so the upgrade stays deleted and nothing more is written. On the
    local control plane the webhook is the test process's harness server,
    which aborts this namespace's admission requests for the window.
    Given a worker Deployment with 2 replicas, surge 1, unavailable 0, pods ready after 2s and terminating in 3s
    And an API Deployment with 1 replica, pods ready after 1s and terminating in 1s
    And the Deployments are rolled out
    When the upgrade "upgrade-v2" is applied
    And the phase becomes "WaitingForWorkers" within 1 minute
    And the faults "webhook-down@0s:for=1m,delete@0s:recreate=10s" are injected
    Then a fault's note matches "^the re-apply of upgrade [a-z0-9-]+/upgrade-v2 failed: .*failed calling webhook.*; it stays deleted$" within 20 seconds
    And the upgrade "upgrade-v2" does not exist
    And the API image is not written
