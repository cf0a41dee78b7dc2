import { z } from 'zod';
import type { MessageKey } from '../../../i18n';
import { LIMITS } from '../../../ipc/bindings';
import type { FieldErrors, Parsed } from '../../../forms/fieldErrors';
import { refusal } from '../../../forms/parsers';

/*
 * Settings → Team's form, checked before a round trip with the rules `team:connect` applies
 * (`src-tauri/crates/team/README.md`, "Settings → Team"); the backend stays the authority and its
 * issues are shown at the same fields.
 */

/** The name rule the team crate (and `keypool-server --team`) checks. */
const TEAM_NAME = /^[A-Za-z0-9._-]+$/;
const SECRET = /^[0-9a-fA-F]{64}$/;

export const teamFormSchema = z.object({
  redisUrl: z
    .string()
    .trim()
    .min(1, refusal('team.urlRequired'))
    .max(LIMITS.redisUrl.maxChars, refusal('issue.badRedisUrl'))
    .refine((url) => /^rediss?:\/\/[^/?#]+/.test(url), refusal('issue.badRedisUrl')),
  team: z
    .string()
    .trim()
    .min(1, refusal('issue.badTeamName'))
    .max(LIMITS.teamName.maxChars, refusal('issue.badTeamName'))
    .refine((name) => TEAM_NAME.test(name), refusal('issue.badTeamName')),
  /** Empty: the kept secret. */
  secret: z
    .string()
    .trim()
    .refine((secret) => secret === '' || SECRET.test(secret), refusal('team.secretFormat')),
});

export type TeamForm = z.input<typeof teamFormSchema>;
export type TeamField = keyof TeamForm;
export const TEAM_FIELDS: readonly TeamField[] = ['redisUrl', 'team', 'secret'];

/** What `team:connect` takes. */
export interface TeamJoin {
  redisUrl: string;
  team: string;
  secret?: string;
}

/** The form, checked; an empty secret is left out (the kept one is used). */
export function parseTeamForm(form: TeamForm): Parsed<TeamJoin, TeamField> {
  const result = teamFormSchema.safeParse(form);
  if (!result.success) {
    const errors: FieldErrors<TeamField> = {};
    for (const issue of result.error.issues) {
      const field = String(issue.path[0] ?? '') as TeamField;
      errors[field] ??= issue.message as MessageKey;
    }
    return { ok: false, errors };
  }
  const { redisUrl, team, secret } = result.data;
  return { ok: true, value: { redisUrl, team, ...(secret ? { secret } : {}) } };
}
