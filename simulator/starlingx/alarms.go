package starlingx

import (
	"fmt"
	"sort"
	"strings"
)

// VIM alarm ids (starlingx/fault fm-api constants.py
// FM_ALARM_ID_SW_UPGRADE_AUTO_APPLY_* and FM_ALARM_ID_KUBE_UPGRADE_AUTO_APPLY_*).
const (
	AlarmSwUpgradeInProgress   = "900.201"
	AlarmSwUpgradeAborting     = "900.202"
	AlarmSwUpgradeFailed       = "900.203"
	AlarmKubeUpgradeInProgress = "900.401"
	AlarmKubeUpgradeAborting   = "900.402"
	AlarmKubeUpgradeFailed     = "900.403"
)

// vimAlarm is the alarm the VIM raises for its strategy: in progress while
// applying, failed after apply-failed or apply-timeout (and through the
// abort phase the VIM then runs), aborting while an abort action runs;
// none in any other state. It is cleared only when the
// state leaves those, or the strategy is deleted (nfv-vim
// objects/_sw_update.py strategy_apply / strategy_apply_complete /
// strategy_abort / strategy_delete, objects/_sw_upgrade.py nfvi_update).
func (s *System) vimAlarm() (Alarm, bool) {
	st := s.strategy
	if st == nil {
		return Alarm{}, false
	}
	ids := [3]string{AlarmSwUpgradeInProgress, AlarmSwUpgradeAborting, AlarmSwUpgradeFailed}
	if st.Type == KubeUpgrade {
		ids = [3]string{AlarmKubeUpgradeInProgress, AlarmKubeUpgradeAborting, AlarmKubeUpgradeFailed}
	}
	a := Alarm{Severity: "major", EntityInstanceID: "orchestration=" + string(st.Type)}
	applyFailed := st.Apply.Result == ResultFailed || st.Apply.Result == ResultTimedOut
	switch {
	case st.State == StateApplying:
		a.ID, a.Reason = ids[0], string(st.Type)+" auto-apply in progress"
	case st.State == StateApplyFailed, st.State == StateApplyTimeout, applyFailed:
		// Strategy.is_apply_failed / is_apply_timed_out also hold when the
		// apply phase failed and the VIM's own abort phase then ran
		// (aborting, aborted, abort-failed): the failed alarm stays.
		a.ID, a.Reason, a.Severity = ids[2], string(st.Type)+" auto-apply failed", "critical"
	case st.State == StateAborting:
		a.ID, a.Reason = ids[1], string(st.Type)+" auto-apply aborting"
	default:
		return Alarm{}, false
	}
	return a, true
}

// activeAlarms are the configured alarms plus the VIM's own.
func (s *System) activeAlarms() []Alarm {
	out := append([]Alarm(nil), s.alarms...)
	if a, ok := s.vimAlarm(); ok {
		out = append(out, a)
	}
	return out
}

// precheckIgnoredAlarms is the deploy precheck's ignore list
// (starlingx/update software/scripts/deploy-precheck
// run_general_health_check alarm_ignore_list), passed to sysinv's
// /health/kube-upgrade.
var precheckIgnoredAlarms = []string{"280.001", "280.002", "280.003", "280.004", "280.005", AlarmSwUpgradeInProgress}

// kubeIgnoredAlarms is KubeUpgradeStrategy's IGNORE_ALARMS (starlingx/nfv
// nfv_vim/strategy/_strategy.py KubeUpgradeStrategy.__init__).
var kubeIgnoredAlarms = []string{"100.103", "100.119", "200.001", "280.001", "280.002", "700.004", "750.006",
	"900.007", "900.022", "900.023", AlarmKubeUpgradeInProgress, AlarmKubeUpgradeAborting, "900.701", "900.024"}

// precheckAlarmIssue is sysinv's health "No alarms" check as the deploy
// precheck runs it (sysinv common/health.py _check_alarms): alarms on the
// ignore list do not count; with force (the VIM passes force for relaxed
// and permissive alarm restrictions: SwDeployPrecheckStep.apply) only
// management-affecting alarms fail.
func (s *System) precheckAlarmIssue(restriction string) string {
	force := restriction == AlarmsRelaxed || restriction == AlarmsPermissive
	found, affecting, failed := 0, 0, false
	for _, a := range s.activeAlarms() {
		if contains(precheckIgnoredAlarms, a.ID) {
			continue
		}
		found++
		if a.MgmtAffecting {
			affecting++
			failed = true
		} else if !force {
			failed = true
		}
	}
	if !failed {
		return ""
	}
	return fmt.Sprintf(`No alarms: [Fail] [%d] alarms found, [%d] of which are management affecting and [0] are certificate expiration alarms. Use "fm alarm-list" for details`, found, affecting)
}

// kubeAlarmIssue is the kube-upgrade build's alarm check: query-alarms
// keeps the alarms not on kubeIgnoredAlarms (relaxed also skips those not
// management-affecting, permissive skips all: QueryAlarmsStep), and the
// build fails "active alarms present [ … ]"
// (stages/_kube_upgrade_stages.py _build_kube_upgrade_stages).
func (s *System) kubeAlarmIssue(restriction string) string {
	seen := map[string]bool{}
	for _, a := range s.activeAlarms() {
		switch {
		case contains(kubeIgnoredAlarms, a.ID):
		case restriction == AlarmsPermissive:
		case restriction == AlarmsRelaxed && !a.MgmtAffecting:
		default:
			seen[a.ID] = true
		}
	}
	if len(seen) == 0 {
		return ""
	}
	ids := make([]string, 0, len(seen))
	for id := range seen {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return fmt.Sprintf("active alarms present [ %s ]", strings.Join(ids, ", "))
}
