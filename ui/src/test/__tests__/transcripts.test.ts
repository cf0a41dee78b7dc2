import { describe, expect, it } from 'vitest';
import { createFakeBackend } from '../fakeBackend';
import { comparable, Ids, TRANSCRIPTS } from '../transcripts';

/*
 * The fake backend, replayed against what the real one answered: each step of each transcript
 * goes to the fake with the same arguments, and the fake must answer the same (or refuse with the
 * same code, issues and details). A rule or an answer changed in Rust changes a transcript
 * (`npm run transcripts`), and this suite then fails until the fake agrees.
 */

describe('the fake backend answers as the backend did', () => {
  it('has transcripts to replay', () => {
    expect(TRANSCRIPTS.length, 'ui/src/test/transcripts/ holds the backend’s transcripts').toBeGreaterThan(0);
  });

  for (const transcript of TRANSCRIPTS) {
    it(`${transcript.scenario}: ${transcript.about}`, async () => {
      const backend = createFakeBackend(undefined, { providers: transcript.given.providers });
      const ids = new Ids();
      for (const [index, step] of transcript.steps.entries()) {
        const where = `${transcript.scenario} step ${index + 1}: ${step.command} ${JSON.stringify(step.args)}`;
        const args = ids.args(step.args);
        let outcome: { answer: unknown } | { error: unknown };
        try {
          outcome = { answer: await backend.invoke(step.command, args) };
        } catch (error) {
          outcome = { error };
        }
        if (step.error) {
          expect('error' in outcome, `${where}: the backend refused it`).toBe(true);
          const error = 'error' in outcome ? ids.marked(outcome.error, transcript.times) : undefined;
          expect(comparable(error), where).toEqual(comparable(step.error));
        } else {
          expect('answer' in outcome ? undefined : outcome.error, `${where}: the backend answered it`).toBeUndefined();
          const answer = 'answer' in outcome ? outcome.answer : undefined;
          expect(ids.marked(answer, transcript.times), where).toEqual(step.answer);
        }
      }
    });
  }
});
