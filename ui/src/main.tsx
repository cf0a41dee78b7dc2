import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './App';
import './styles.css';
import { markStartup } from './startupMarks';

// Every module the first screen imports has run by now.
markStartup('script');

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root to render into');

createRoot(root).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
