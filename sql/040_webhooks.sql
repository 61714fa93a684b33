-- Webhook endpoints, their deliveries and every delivery attempt (issue 13).
--
-- An endpoint's signing secret is stored encrypted (AES-256-GCM, src/core/secret-box.ts)
-- under the key named by secret_key_id: it must be usable to sign, so it cannot be
-- hashed. During a rotation the previous secret keeps signing until
-- previous_secret_expires_at. DELETE disables an endpoint (disabled_reason
-- 'deleted'); the sweep disables one whose attempts have all failed for days
-- ('failing'). failing_since is the first failed attempt after the last success;
-- paused_until holds an endpoint back briefly after an attempt got no answer.
CREATE TABLE webhook_endpoints (
  id                          uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  org_id                      uuid NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
  url                         text NOT NULL CHECK (char_length(url) BETWEEN 9 AND 2048),
  event_types                 text[] NOT NULL CHECK (cardinality(event_types) >= 1),
  secret_key_id               text NOT NULL,
  secret_ciphertext           bytea NOT NULL,
  previous_secret_ciphertext  bytea,
  previous_secret_expires_at  timestamptz,
  secret_rotated_at           timestamptz,
  status                      text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'disabled')),
  disabled_reason             text CHECK (disabled_reason IN ('deleted', 'failing')),
  disabled_at                 timestamptz,
  failing_since               timestamptz,
  last_success_at             timestamptz,
  paused_until                timestamptz,
  created_at                  timestamptz NOT NULL DEFAULT now(),
  CHECK ((status = 'active') = (disabled_reason IS NULL)),
  CHECK ((disabled_reason IS NULL) = (disabled_at IS NULL)),
  CHECK ((previous_secret_ciphertext IS NULL) = (previous_secret_expires_at IS NULL))
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, created_at);
CREATE INDEX webhook_endpoints_active ON webhook_endpoints (org_id) WHERE status = 'active';

-- One event for one endpoint. Its id is the X-Svc-Delivery-Id, the same on every
-- attempt. attempt_count counts the attempts of the current cycle (a redelivery
-- starts a new one); the retry schedule and the dead letter after the 8th follow
-- it. A sweep leases a pending delivery (lease_id, leased_until) while it sends it.
CREATE TABLE webhook_deliveries (
  id                uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  endpoint_id       uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
  event_id          uuid NOT NULL,
  event_type        text NOT NULL,
  event_created_at  timestamptz NOT NULL,
  data              jsonb NOT NULL,
  status            text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'delivered', 'dead', 'dropped')),
  attempt_count     integer NOT NULL DEFAULT 0 CHECK (attempt_count BETWEEN 0 AND 8),
  next_attempt_at   timestamptz,
  leased_until      timestamptz,
  lease_id          uuid,
  last_attempt_at   timestamptz,
  last_status_code  integer,
  last_error        text,
  delivered_at      timestamptz,
  created_at        timestamptz NOT NULL DEFAULT now(),
  UNIQUE (endpoint_id, event_id),
  CHECK ((status = 'pending') = (next_attempt_at IS NOT NULL))
);
-- The sweep reads each endpoint's oldest due deliveries in order, and counts those in flight.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (endpoint_id, next_attempt_at, id) WHERE status = 'pending';
CREATE INDEX webhook_deliveries_leased ON webhook_deliveries (endpoint_id) WHERE leased_until IS NOT NULL;
CREATE INDEX webhook_deliveries_listed ON webhook_deliveries (endpoint_id, created_at DESC, id);
CREATE INDEX webhook_deliveries_finished ON webhook_deliveries (created_at) WHERE status <> 'pending';

-- Every attempt: when, the HTTP status if one came, how long it took, a short
-- error, and the start of the response body.
CREATE TABLE webhook_attempts (
  id               uuid PRIMARY KEY DEFAULT gen_random_uuid(),
  delivery_id      uuid NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
  attempted_at     timestamptz NOT NULL,
  succeeded        boolean NOT NULL,
  status_code      integer,
  latency_ms       integer NOT NULL CHECK (latency_ms >= 0),
  error            text CHECK (char_length(error) <= 300),
  response_sample  text CHECK (char_length(response_sample) <= 1024)
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, attempted_at DESC);
