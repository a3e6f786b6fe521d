// Package starlingx is a single-threaded model of a StarlingX system as the
// upgrade operator sees it through the VIM (nfv-vim), USM ("software") and
// sysinv APIs: system mode, hosts and the active controller, uploaded and
// deployed product releases, Kubernetes versions, alarms, the USM deploy
// record, the sysinv kube_upgrade record and the VIM's single orchestration
// strategy slot (sw-upgrade or kube-upgrade) with its build, apply and abort
// phases, stages and steps.
//
// The model has no goroutines and never reads the wall clock. Every method
// that observes or changes the system takes the current model time, first
// runs the system forward to it (Advance) and then acts, so the
// discrete-event simulator can drive it in virtual time and fakevim with a
// real clock multiplied by a speed factor. NextEvent tells a driver when the
// model will next change on its own.
//
// What it mirrors (public StarlingX sources):
//   - strategy states, phases, results and the apply / abort / delete rules:
//     starlingx/nfv nfv-common/nfv_common/strategy/_strategy.py and
//     nfv-vim/nfv_vim/objects/_sw_update.py;
//   - stage and step names and their order: nfv-vim/nfv_vim/strategy/
//     _strategy.py (SwUpgradeStrategy), stages/_kube_upgrade_stages.py,
//     _strategy_stages.py and _constants.py;
//   - release and deploy states: starlingx/update software/software/states.py;
//   - Kubernetes version states and kube_upgrade states: starlingx/config
//     sysinv/common/kubernetes.py (kube_get_version_states).
//
// Simplifications are listed in the README of fakevim and in the docstrings
// of the functions that make them.
package starlingx
