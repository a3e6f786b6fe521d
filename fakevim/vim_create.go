package fakevim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lunadas/upgrade-operator/simulator/starlingx"
)

// createFields are the attributes each create body accepts, true when
// mandatory (wsme types SwUpgradeStrategyCreateData and
// KubeUpgradeStrategyCreateData). Unknown attributes are refused, as wsme
// does.
var createFields = map[starlingx.StrategyType]map[string]bool{
	starlingx.SwUpgrade: {
		"controller-apply-type": true, "storage-apply-type": true, "worker-apply-type": true,
		"default-instance-action": true, "max-parallel-worker-hosts": false, "alarm-restrictions": false,
		"release": false, "rollback": false, "delete": false, "snapshot": false, "cleanup": false,
		"kube-upgrade": false, "pre-upgrade-deploy": false,
	},
	starlingx.KubeUpgrade: {
		"to-version": true, "storage-apply-type": true, "worker-apply-type": true, "default-instance-action": true,
		"controller-apply-type": false, "max-parallel-worker-hosts": false, "alarm-restrictions": false,
	},
}

type createBody struct {
	ControllerApplyType    starlingx.ApplyType `json:"controller-apply-type"`
	StorageApplyType       starlingx.ApplyType `json:"storage-apply-type"`
	WorkerApplyType        starlingx.ApplyType `json:"worker-apply-type"`
	MaxParallelWorkerHosts int                 `json:"max-parallel-worker-hosts"`
	DefaultInstanceAction  string              `json:"default-instance-action"`
	AlarmRestrictions      string              `json:"alarm-restrictions"`
	Release                []string            `json:"release"`
	Rollback               bool                `json:"rollback"`
	Delete                 bool                `json:"delete"`
	Snapshot               bool                `json:"snapshot"`
	Cleanup                bool                `json:"cleanup"`
	KubeUpgrade            string              `json:"kube-upgrade"`
	PreUpgradeDeploy       bool                `json:"pre-upgrade-deploy"`
	ToVersion              string              `json:"to-version"`
}

func (s *Server) createStrategy(w http.ResponseWriter, r *http.Request) {
	t, ok := strategyType(w, r)
	if !ok {
		return
	}
	fields, modelled := createFields[t]
	if !modelled {
		writeVIMFault(w, http.StatusBadRequest, fmt.Sprintf("fakevim models sw-upgrade and kube-upgrade strategies, not %s", t))
		return
	}
	body, msg := decodeCreate(r, fields)
	if msg != "" {
		writeVIMFault(w, http.StatusBadRequest, msg)
		return
	}
	if t == starlingx.KubeUpgrade {
		if msg := kubeUpgradeRules(&body); msg != "" {
			writeVIMFault(w, http.StatusBadRequest, msg)
			return
		}
	}
	req := starlingx.CreateRequest{
		Type: t, ControllerApplyType: body.ControllerApplyType, StorageApplyType: body.StorageApplyType,
		WorkerApplyType: body.WorkerApplyType, MaxParallelWorkerHosts: body.MaxParallelWorkerHosts,
		DefaultInstanceAction: body.DefaultInstanceAction, AlarmRestrictions: body.AlarmRestrictions,
		Releases: body.Release, Rollback: body.Rollback, Delete: body.Delete, Snapshot: body.Snapshot,
		Cleanup: body.Cleanup, KubeUpgrade: body.KubeUpgrade, PreUpgradeDeploy: body.PreUpgradeDeploy, ToVersion: body.ToVersion,
	}
	var st starlingx.Strategy
	var err error
	s.WithModel(func(m *starlingx.System, now time.Time) { st, err = m.CreateStrategy(now, req) })
	if err != nil {
		writeModelError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"strategy": strategyJSON(st)})
}

// decodeCreate checks the attributes (unknown ones and missing mandatory
// ones answer 400 with wsme's wording) and decodes the body.
func decodeCreate(r *http.Request, fields map[string]bool) (createBody, string) {
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		return createBody{}, "Request body is not a JSON object: " + err.Error()
	}
	var unknown []string
	for k := range raw {
		if _, ok := fields[k]; !ok {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return createBody{}, fmt.Sprintf("Unknown attribute for argument request_data: %s", unknown[0])
	}
	var mandatory []string
	for k, must := range fields {
		if v, ok := raw[k]; must && (!ok || bytes.Equal(bytes.TrimSpace(v), []byte("null"))) {
			mandatory = append(mandatory, k)
		}
	}
	if len(mandatory) > 0 {
		sort.Strings(mandatory)
		return createBody{}, fmt.Sprintf("Invalid input for field/attribute %s. Value: 'None'. Mandatory field missing.", mandatory[0])
	}
	var body createBody
	b, _ := json.Marshal(raw)
	if err := json.Unmarshal(b, &body); err != nil {
		return createBody{}, "Invalid input: " + err.Error()
	}
	return body, ""
}

// kubeUpgradeRules applies KubeUpgradeStrategyAPI.post's own checks
// (starlingx/nfv _sw_update_strategy.py): to-version is lower-cased and
// gets a leading "v" when it has none; controller-apply-type (default
// serial) must be serial. It returns the 400 fault string, or "".
func kubeUpgradeRules(b *createBody) string {
	b.ToVersion = strings.ToLower(b.ToVersion)
	if !strings.HasPrefix(b.ToVersion, "v") {
		b.ToVersion = "v" + b.ToVersion
	}
	if b.ControllerApplyType == "" {
		b.ControllerApplyType = starlingx.ApplySerial
	}
	if b.ControllerApplyType != starlingx.ApplySerial {
		return "controller-apply-type must be 'serial' for kube-upgrade"
	}
	return ""
}

// stageID reads the actions body's "stage-id" as wsme reads an int
// attribute (SwUpdateStrategyActionData.stage_id): absent is unset, null
// is None, a number or a string of digits is that number ("2" from the
// sw-manager command line); anything else is a 400.
func stageID(raw json.RawMessage, present bool) (id *int, set bool, fault string) {
	if !present {
		return nil, false, ""
	}
	if string(raw) == "null" {
		return nil, true, ""
	}
	var n int
	if err := json.Unmarshal(raw, &n); err == nil {
		return &n, true, ""
	}
	var str string
	if err := json.Unmarshal(raw, &str); err == nil {
		if v, err := strconv.Atoi(strings.TrimSpace(str)); err == nil {
			return &v, true, ""
		}
	}
	return nil, true, fmt.Sprintf("Invalid input for field/attribute stage-id. Value: '%s'. Wrong type. Expected 'int'", strings.Trim(string(raw), `"`))
}

// strategyAction serves POST .../strategy/actions: apply-all, apply-stage,
// abort, abort-stage; 202 with the strategy.
func (s *Server) strategyAction(w http.ResponseWriter, r *http.Request) {
	t, ok := strategyType(w, r)
	if !ok {
		return
	}
	var raw map[string]json.RawMessage
	if err := json.NewDecoder(r.Body).Decode(&raw); err != nil {
		writeVIMFault(w, http.StatusBadRequest, "Request body is not a JSON object: "+err.Error())
		return
	}
	var body struct {
		Action  string
		StageID *int
	}
	if a, ok := raw["action"]; ok {
		if err := json.Unmarshal(a, &body.Action); err != nil {
			writeVIMFault(w, http.StatusBadRequest, "Invalid input for field/attribute action. Value: '"+string(a)+"'.")
			return
		}
	}
	sraw, present := raw["stage-id"]
	var stageSet bool
	var fault string
	if body.StageID, stageSet, fault = stageID(sraw, present); fault != "" {
		writeVIMFault(w, http.StatusBadRequest, fault)
		return
	}
	record(r).Action = body.Action
	apply := body.Action == "apply-all" || body.Action == "apply-stage"
	if !apply && body.Action != "abort" && body.Action != "abort-stage" {
		writeVIMFault(w, http.StatusBadRequest, fmt.Sprintf("Invalid input for field/attribute action. Value: '%s'. Value should be one of: apply-all, apply-stage, abort, abort-stage", body.Action))
		return
	}
	stage := body.StageID
	// SwUpdateStrategyActionAPI.post: only an absent stage-id is refused
	// for the -stage actions; null is None, which the VIM takes as "the
	// whole strategy" (sw-manager … abort without --stage-id sends
	// abort-stage with null).
	if (body.Action == "apply-stage" || body.Action == "abort-stage") && !stageSet {
		writeVIMFault(w, http.StatusBadRequest, "No stage-id received")
		return
	}
	var st starlingx.Strategy
	var err error
	s.WithModel(func(m *starlingx.System, now time.Time) {
		if apply {
			st, err = m.ApplyStrategy(now, t, "", stage)
		} else {
			st, err = m.AbortStrategy(now, t, "", stage)
		}
	})
	if err != nil {
		writeModelError(w, err)
		return
	}
	writeJSON(w, http.StatusAccepted, map[string]any{"strategy": strategyJSON(st)})
}
