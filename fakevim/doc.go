// Package fakevim serves the StarlingX APIs the upgrade operator uses —
// Keystone v3 tokens, the VIM orchestration API, USM and sysinv — in their
// real wire shapes, over the system model of simulator/starlingx, driven
// by a real clock multiplied by a speed factor. Faults (failed or timed-out
// builds and applies, 503 storms, delays, expired tokens) are set by
// options or at runtime through /admin, and every API request is logged
// for tests to assert on (e.g. that no second strategy was created).
//
// One Server holds one model behind one mutex; its handlers can be served
// on one listener (the paths do not collide) or one per service, as a
// real system does (Keystone 5000, VIM 4545, USM 5493, sysinv 6385).
// See README.md for the endpoints, the admin API and an example session.
package fakevim
