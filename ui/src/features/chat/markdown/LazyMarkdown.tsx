import { type ComponentProps, useSyncExternalStore } from 'react';

/*
 * The Markdown renderer (react-markdown, remark-gfm and the highlighting grammars: most of the
 * UI's code by weight) is not on the first screen: it loads on first use, in a chunk of its own,
 * or as soon as a question is typed (`preloadMarkdown`). Until it is there a reply shows as its
 * plain text, so nothing waits on it.
 */

type MarkdownModule = typeof import('./Markdown');
type Props = ComponentProps<MarkdownModule['Markdown']>;

let loaded: MarkdownModule | null = null;
let loading: Promise<MarkdownModule> | null = null;
const listeners = new Set<() => void>();

/** Loads the renderer (once); every `Markdown` shown switches to it when it is there. */
export function preloadMarkdown(): Promise<MarkdownModule> {
  loading ??= import('./Markdown').then((module) => {
    loaded = module;
    for (const listener of listeners) listener();
    return module;
  });
  return loading;
}

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}

const current = () => loaded;

export function Markdown(props: Props) {
  const module = useSyncExternalStore(subscribe, current, current);
  if (module === null) {
    void preloadMarkdown();
    return (
      <div className="markdown markdown-plain" data-testid="markdown">
        <p>{props.source}</p>
      </div>
    );
  }
  return <module.Markdown {...props} />;
}
