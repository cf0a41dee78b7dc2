import { memo, useMemo, useRef, type ReactElement, type ReactNode } from 'react';
import renderMarkdown, { type Components, type ExtraProps } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { BrowserLink } from '../../../components/BrowserLink';
import { CopyButton } from '../../../components/CopyButton';
import { useI18n } from '../../../i18n/I18nProvider';
import { extendSplit, tailOf, type Split } from './blocks';
import { highlighted } from './highlight';
import { browserUrl, isAutolink } from './links';

/*
 * A reply rendered as GitHub-flavoured Markdown (tables, task lists, strikethrough, autolinks,
 * fenced code with highlighting and a copy button).
 *
 * Safe by construction: react-markdown builds React elements from a syntax tree, and HTML in the
 * reply (`<img onerror=…>`, `<script>`) is a `raw` node that it turns into text; nothing is ever
 * set as HTML. Links open in the system browser on click only (never in this window), and only
 * http(s); images are not loaded (they would be a request to wherever the model points), they
 * show as a link.
 *
 * Fast while streaming: the reply is cut into top-level blocks (`blocks.ts`); finished blocks are
 * memoized (a finished block's element tree is also cached by its source, so the saved message
 * reuses what the stream rendered), and only the last block is parsed again as text arrives. An
 * unclosed code fence at the end is shown as plain code without parsing at all.
 */

interface Props {
  source: string;
  /** The reply is still being written: its last block may change. */
  streaming?: boolean;
}

export function Markdown({ source, streaming = false }: Props) {
  const previous = useRef<Split | null>(null);
  const split = extendSplit(previous.current, source);
  previous.current = split;
  const tail = tailOf(split, !streaming);
  const definitions = split.definitions.length + tail.definitions.length > 0 ? [...split.definitions, ...tail.definitions].join('\n') : '';
  const groups = Math.ceil(split.blocks.length / GROUP);
  return (
    <div className="markdown" data-testid="markdown">
      {Array.from({ length: groups }, (_, group) => (
        // biome-ignore lint/suspicious/noArrayIndexKey: blocks are only appended; group g holds the same blocks on every render
        <BlockGroup key={group} blocks={split.blocks} start={group * GROUP} definitions={definitions} />
      ))}
      {tail.source !== '' &&
        (streaming && tail.openFence ? (
          <CodeBlock language={tail.openFence.language} code={tail.openFence.code} final={false} />
        ) : (
          <Block key={split.blocks.length} source={tail.source} definitions={definitions} final={!streaming} />
        ))}
    </div>
  );
}

/**
 * Finished blocks are rendered in groups, each a memoized component: a render while streaming
 * compares one prop set per group instead of one per block, so its cost hardly grows with the
 * length of the reply (a 20 000-token reply has hundreds of blocks).
 */
const GROUP = 32;

interface GroupProps {
  /** Every finished block (only ever appended to); this group renders `start` to `start + GROUP`. */
  blocks: string[];
  start: number;
  definitions: string;
}

const BlockGroup = memo(
  function BlockGroup({ blocks, start, definitions }: GroupProps) {
    return (
      // Its own box, so the browser can skip laying out and painting groups scrolled out of view.
      <div className="markdown__group">
        {blocks.slice(start, start + GROUP).map((block, index) => (
          // biome-ignore lint/suspicious/noArrayIndexKey: a group's blocks never change once finished
          <Block key={index} source={block} definitions={definitions} final />
        ))}
      </div>
    );
  },
  // Blocks are never changed once finished: the same first block and count mean the same group.
  (before, after) =>
    before.start === after.start &&
    before.definitions === after.definitions &&
    before.blocks[before.start] === after.blocks[after.start] &&
    Math.min(before.blocks.length - before.start, GROUP) === Math.min(after.blocks.length - after.start, GROUP),
);

interface BlockProps {
  source: string;
  /** Reference definitions from every block, so `[text][id]` resolves across blocks. */
  definitions: string;
  /** Finished: its code is highlighted, and its rendering is cached. */
  final: boolean;
}

/**
 * Parsed element trees of finished blocks, by source: a bounded cache, oldest dropped first. Big
 * enough for the longest replies (a 20 000-token reply has some 500 to 2 000 blocks), so the saved
 * message shown when a stream ends is built from what the stream already parsed.
 */
const rendered = new Map<string, ReactElement>();
const CACHE_LIMIT = 4000;

const Block = memo(function Block({ source, definitions, final }: BlockProps) {
  const text = definitions ? `${source}\n\n${definitions}` : source;
  if (!final) return render(text, LIVE);
  let element = rendered.get(text);
  if (element) {
    rendered.delete(text); // refresh its age
  } else {
    element = render(text, FINAL);
    if (rendered.size >= CACHE_LIMIT) rendered.delete(rendered.keys().next().value as string);
  }
  rendered.set(text, element);
  return element;
});

function render(text: string, components: Components): ReactElement {
  // skipHtml stays false on purpose: raw HTML then renders as its own text, visibly.
  return renderMarkdown({ children: text, remarkPlugins: [remarkGfm], components });
}

/** The text inside a syntax tree node (the code of a `<code>` element). */
function textOf(node: unknown): string {
  if (!node || typeof node !== 'object') return '';
  const n = node as { type?: string; value?: string; children?: unknown[] };
  if (n.type === 'text') return n.value ?? '';
  return (n.children ?? []).map(textOf).join('');
}

/** `language-ts` → `ts`. */
function languageOf(node: unknown): string {
  const code = (node as { children?: { tagName?: string; properties?: { className?: unknown } }[] })?.children?.[0];
  const classes = code?.tagName === 'code' && Array.isArray(code.properties?.className) ? (code.properties.className as string[]) : [];
  return classes.find((c) => c.startsWith('language-'))?.slice('language-'.length) ?? '';
}

function CodeBlock({ language, code, final }: { language: string; code: string; final: boolean }) {
  const { t } = useI18n();
  const body = code.endsWith('\n') ? code.slice(0, -1) : code;
  const colored = useMemo(() => (final ? highlighted(language, body) : null), [final, language, body]);
  return (
    <div className="code-block" data-testid="code-block" data-language={language || undefined}>
      <div className="code-block__bar">
        <span className="code-block__language">{language || t('md.code')}</span>
        <CopyButton text={() => body} label={t('md.copyCode')} className="button button--small code-block__copy" testId="code-copy" />
      </div>
      {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a long line scrolls sideways; the keyboard must reach it to scroll */}
      <pre className="code-block__pre" tabIndex={0}>
        <code className={colored ? `hljs language-${language}` : undefined}>{colored ?? body}</code>
      </pre>
    </div>
  );
}

function Pre({ node }: React.JSX.IntrinsicElements['pre'] & ExtraProps, final: boolean) {
  const code = node?.children?.[0];
  return <CodeBlock language={languageOf(node)} code={textOf(code)} final={final} />;
}

function Link({ href, children, node }: React.JSX.IntrinsicElements['a'] & ExtraProps) {
  const url = browserUrl(href);
  if (!url) {
    // Not http(s) (javascript:, file:, a relative path): shown, never followed.
    return (
      <span className="md-link md-link--inert" title={href}>
        {children}
      </span>
    );
  }
  return (
    <>
      <BrowserLink url={url} className="md-link" testId="md-link">
        {children}
      </BrowserLink>
      {!isAutolink(textOf(node), url) && <span className="md-link__target"> ({new URL(url).host})</span>}
    </>
  );
}

/** Images are not loaded: a link to them instead (a click opens them in the browser). */
function Image({ src, alt }: React.JSX.IntrinsicElements['img'] & ExtraProps) {
  const { t } = useI18n();
  const label = alt ? t('md.image', { alt }) : t('md.imageNoAlt');
  const url = typeof src === 'string' ? browserUrl(src) : null;
  if (!url) return <span className="md-image">[{label}]</span>;
  return (
    <Link href={url}>
      <span className="md-image">[{label}]</span>
    </Link>
  );
}

function TaskBox({ checked, type }: React.JSX.IntrinsicElements['input'] & ExtraProps) {
  const { t } = useI18n();
  if (type !== 'checkbox') return null;
  return <input type="checkbox" checked={Boolean(checked)} disabled readOnly aria-label={checked ? t('md.taskDone') : t('md.taskOpen')} />;
}

function Table({ children }: React.JSX.IntrinsicElements['table'] & ExtraProps) {
  const { t } = useI18n();
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a wide table scrolls sideways; the keyboard must reach it to scroll
    <figure className="md-table" aria-label={t('md.table')} tabIndex={0}>
      <table>{children}</table>
    </figure>
  );
}

/* A model's `#` heading sits under the conversation's own headings (h1 the page, h2 the chat). */
const H3 = ({ children }: { children?: ReactNode }) => <h3 className="md-heading">{children}</h3>;
const H4 = ({ children }: { children?: ReactNode }) => <h4 className="md-heading">{children}</h4>;
const H5 = ({ children }: { children?: ReactNode }) => <h5 className="md-heading">{children}</h5>;
const H6 = ({ children }: { children?: ReactNode }) => <h6 className="md-heading">{children}</h6>;

const SHARED: Components = {
  a: Link,
  img: Image,
  input: TaskBox,
  table: Table,
  h1: H3,
  h2: H4,
  h3: H5,
  h4: H6,
  h5: H6,
  h6: H6,
};
const FINAL: Components = { ...SHARED, pre: (props) => Pre(props, true) };
const LIVE: Components = { ...SHARED, pre: (props) => Pre(props, false) };
