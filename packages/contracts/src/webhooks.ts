import { z } from 'zod';

// Completion webhooks: a scan submitted with `callback_url` has its status record POSTed there
// once it is completed, failed or cancelled. Delivery is a setting of the request, not an engine
// option, so it sits beside the source fields (repo_path, branch) rather than in the option table.

/** The header a delivery is signed in: `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`. */
export const WEBHOOK_SIGNATURE_HEADER = 'X-Reposcan-Signature';

/**
 * Delays before each retry of a failed delivery, in units of WEBHOOK_RETRY_BASE_MS (2 s by
 * default: 2 s, 8 s, 30 s, 2 min, 10 min). The first attempt runs at once, so a delivery is
 * tried at most this many times plus one.
 */
export const WEBHOOK_RETRY_FACTORS = [1, 4, 15, 60, 300] as const;
export const WEBHOOK_MAX_ATTEMPTS = WEBHOOK_RETRY_FACTORS.length + 1;

export const CallbackUrl = z.string().min(1).max(2048).meta({
  description:
    "https URL that receives the scan status (the `data` of GET /v1/scans/{id}, as JSON) by POST once the scan is completed, failed or cancelled, signed in the `X-Reposcan-Signature` header with the server's WEBHOOK_SECRET. Checked at submit against the server's webhook policy (WEBHOOK_ALLOWED_HOSTS, WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE_HOSTS). Failed deliveries are retried: up to 6 attempts over about 13 minutes.",
  example: 'https://ci.example.com/hooks/reposcan',
});

export const WEBHOOK_DELIVERY_STATES = ['pending', 'retrying', 'delivered', 'failed'] as const;

/** `webhook.json` beside state.json, and the `webhook` block of a scan's status. */
export const WebhookDelivery = z
  .object({
    url_host: z.string().meta({
      description:
        "Host (and port) of the callback URL. Its path and query are not shown: they often carry the receiver's token.",
      example: 'ci.example.com',
    }),
    state: z.enum(WEBHOOK_DELIVERY_STATES).meta({
      description:
        '`pending` until the scan ends and the first attempt is made; `retrying` after a failed attempt with more to come; `delivered` once the receiver answered 2xx; `failed` once every attempt failed.',
    }),
    attempts: z.int().min(0).meta({ description: 'POSTs made so far.' }),
    last_status: z.int().nullable().meta({
      description: 'HTTP status of the last attempt; null when it got no answer (timeout, refused, refused address).',
    }),
    last_error: z.string().nullable().meta({ description: 'Why the last attempt failed; null after a success.' }),
    last_attempt_at: z.iso.datetime().nullable(),
    delivered_at: z.iso.datetime().nullable(),
  })
  .meta({ id: 'WebhookDelivery' });
export type WebhookDelivery = z.output<typeof WebhookDelivery>;

/** What a status may show of a callback URL: its host and port, never its path or query. */
export function callbackUrlHost(url: string): string {
  try {
    return new URL(url).host;
  } catch {
    return '';
  }
}
