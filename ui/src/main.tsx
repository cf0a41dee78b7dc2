import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import { preloadMarkdown } from './features/chat/markdown/LazyMarkdown';
import { preloadPages } from './shell/Shell';
import './styles.css';

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root to render into');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);

// What is not on the first screen loads once it is up, so a chat's replies rarely wait for it.
window.setTimeout(() => {
  void preloadMarkdown();
  preloadPages();
}, 0);
