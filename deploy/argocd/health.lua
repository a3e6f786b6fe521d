-- Argo CD health check for ApplicationUpgrade (upgrades.lunadas.dev) and
-- Upgrade (upgrade.starlingx.io): both write kstatus conditions (Ready,
-- Progressing, Reconciling, Stalled) with observedGeneration.
--   Degraded    Stalled=True (Failed; BuildFailed, ApplyFailed, Invalid, ...)
--   Healthy     Ready=True (Completed; the system runs spec.release)
--   Progressing the spec is not observed yet, or Progressing=True
--   Suspended   nothing runs and nothing failed, but not Ready (a platform
--               dry run, spec.targetDeployStep reached, a blocked system)
local hs = {status = "Progressing", message = "Waiting for the operator to observe the object"}
if obj.status == nil then
  return hs
end
local gen = obj.metadata.generation
local observed = obj.status.observedGeneration
if gen ~= nil and (observed == nil or observed < gen) then
  return hs
end
local conditions = {}
if obj.status.conditions ~= nil then
  for _, c in ipairs(obj.status.conditions) do
    conditions[c.type] = c
  end
end
local function message(c)
  if c.message ~= nil and c.message ~= "" then
    return c.message
  end
  return c.reason or ""
end
if conditions["Stalled"] ~= nil and conditions["Stalled"].status == "True" then
  hs.status = "Degraded"
  hs.message = message(conditions["Stalled"])
  return hs
end
if conditions["Ready"] ~= nil and conditions["Ready"].status == "True" then
  hs.status = "Healthy"
  hs.message = message(conditions["Ready"])
  return hs
end
local progressing = conditions["Progressing"]
if progressing ~= nil and progressing.status == "False" and conditions["Ready"] ~= nil and conditions["Ready"].status == "False" then
  hs.status = "Suspended"
  hs.message = message(progressing)
  return hs
end
if progressing ~= nil then
  hs.message = message(progressing)
elseif obj.status.message ~= nil then
  hs.message = obj.status.message
end
return hs
