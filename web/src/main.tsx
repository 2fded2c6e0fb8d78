import { render } from 'preact';
import './styles.css';
import { App } from './App';
import { Store } from './app/store';
import { listenToHistory } from './app/router';
import { lang } from './i18n';

document.documentElement.lang = lang.value;
listenToHistory();
const store = Store.create();
void store.init();
const root = document.getElementById('app');
if (root) render(<App store={store} />, root);
