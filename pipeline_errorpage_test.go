package edge

import "testing"

// TestDenyMessages: every typed reason tells a person what happened.
func TestDenyMessages(t *testing.T) {
	for why := denyNone + 1; why < numDenyReasons; why++ {
		if denyMessages[why] == "" {
			t.Errorf("%s has no message for its error page", why)
		}
	}
}
